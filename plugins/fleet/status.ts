/** `keel fleet status [--watch] [--json]`: counts, running tasks with progress, cost so far, rate-limit state. */
import { Queue } from 'bullmq';
import { parse, type CommandContext } from './cold.js';
import { fleetKeys, type TaskProgress } from './keys.js';
import { openQueue, type FleetQueue } from './queue.js';
import type { Redis } from 'ioredis';

export interface FleetStatus {
  queue: string;
  counts: Record<string, number>;
  paused: boolean;
  running: Array<{ id: string; startedAt?: number } & Partial<TaskProgress>>;
  spentUsd: number;
  budgetUsd?: number;
  budgetStop?: string;
  rateLimit: { requestsPerMinute?: number; waiting: number; limitedForMs: number };
}

export async function readStatus(ctx: CommandContext, queue: FleetQueue, redis: Redis): Promise<FleetStatus> {
  const keys = fleetKeys(ctx.settings.queue);
  const counts = await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized');
  const active = await queue.getActive();
  const requests = new Queue(keys.requestQueue, { connection: redis });
  requests.on('error', () => undefined);
  let waiting = 0;
  let limitedForMs = 0;
  try {
    waiting = await requests.getWaitingCount();
    limitedForMs = Math.max(0, await requests.getRateLimitTtl());
  } finally {
    await requests.close().catch(() => undefined);
  }
  const budgetStop = (await redis.get(keys.budgetStop)) ?? undefined;
  return {
    queue: ctx.settings.queue,
    counts,
    paused: await queue.isPaused(),
    running: active.map((job) => ({ id: job.id!, startedAt: job.processedOn, ...(typeof job.progress === 'object' ? (job.progress as Partial<TaskProgress>) : {}) })),
    spentUsd: Number(await redis.get(keys.spent)) || 0,
    ...(ctx.settings.budgetUsd !== undefined ? { budgetUsd: ctx.settings.budgetUsd } : {}),
    ...(budgetStop ? { budgetStop } : {}),
    rateLimit: { requestsPerMinute: ctx.settings.requestsPerMinute, waiting, limitedForMs },
  };
}

export function formatStatus(status: FleetStatus): string {
  const c = status.counts;
  const lines = [
    `queue ${status.queue}${status.paused ? ' (paused)' : ''}: ${c.waiting + (c.prioritized ?? 0)} waiting, ${c.active} running, ${c.completed} done, ${c.failed} failed${c.delayed ? `, ${c.delayed} delayed` : ''}`,
    `cost so far: $${status.spentUsd.toFixed(4)}${status.budgetUsd !== undefined ? ` of a $${status.budgetUsd} budget` : ''}`,
  ];
  if (status.budgetStop) lines.push(`stopped: ${status.budgetStop}`);
  const rate = status.rateLimit;
  lines.push(
    rate.requestsPerMinute
      ? `rate limit: ${rate.requestsPerMinute} requests/min fleet-wide; ${rate.waiting} request${rate.waiting === 1 ? '' : 's'} waiting${rate.limitedForMs ? `; next in ${rate.limitedForMs} ms` : ''}`
      : 'rate limit: none (fleet.requestsPerMinute)',
  );
  for (const task of status.running) {
    lines.push(`  ${task.id}: ${task.turns ?? 0} turn${task.turns === 1 ? '' : 's'}, $${(task.costUsd ?? 0).toFixed(4)}${task.lastTool ? `, last tool ${task.lastTool}` : ''}${task.worker ? ` on ${task.worker}` : ''}${task.resumed ? ' (resumed)' : ''}${task.restarted ? ' (started afresh: its last run recorded no model turn)' : ''}`);
  }
  return lines.join('\n');
}

export async function statusCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const { values } = await parse('status', args, { watch: { type: 'boolean' }, json: { type: 'boolean' } });
  const fleet = await openQueue(ctx);
  try {
    const show = async () => {
      const status = await readStatus(ctx, fleet.queue, fleet.redis);
      return values.json ? JSON.stringify(status) : formatStatus(status);
    };
    if (!values.watch) {
      ctx.io.stdout.write(`${await show()}\n`);
      return 0;
    }
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      while (!stop.signal.aborted) {
        const text = await show();
        ctx.io.stdout.write(values.json || !ctx.io.stdout.isTTY ? `${text}\n` : `\x1b[H\x1b[2J${text}\n`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1_000);
          stop.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    return 0;
  } finally {
    await fleet.close();
  }
}
