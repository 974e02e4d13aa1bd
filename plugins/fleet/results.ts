/** `keel fleet results [--json] [--patches DIR]`: one line per finished task. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, type CommandContext } from './cold.js';
import type { TaskResult } from './keys.js';
import { openQueue } from './queue.js';

export interface ResultLine {
  id: string;
  conclusion: string;
  costUsd: number;
  turns: number;
  result: string;
  isError: boolean;
  error?: string;
  patch?: string;
  structured?: unknown;
  sessionId?: string;
  worker?: string;
  finishedAt?: number;
}

export async function resultsCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const { values } = await parse('results', args, { json: { type: 'boolean' }, patches: { type: 'string' } });
  const fleet = await openQueue(ctx);
  try {
    const lines: ResultLine[] = [];
    for (const job of await fleet.queue.getJobs(['completed'], 0, -1, true)) {
      const value = job.returnvalue as TaskResult | null;
      if (!value) continue;
      lines.push({ ...value, finishedAt: job.finishedOn });
    }
    for (const job of await fleet.queue.getJobs(['failed'], 0, -1, true)) {
      const cancelled = job.failedReason === 'cancelled';
      lines.push({
        id: job.id!,
        conclusion: cancelled ? 'cancelled' : 'failed',
        costUsd: 0,
        turns: 0,
        result: '',
        isError: true,
        ...(cancelled ? {} : { error: job.failedReason }),
        sessionId: job.data.task.sessionId,
        finishedAt: job.finishedOn,
      });
    }
    lines.sort((a, b) => (a.finishedAt ?? 0) - (b.finishedAt ?? 0) || a.id.localeCompare(b.id));
    if (values.patches) {
      mkdirSync(values.patches, { recursive: true });
      for (const line of lines) if (line.patch) writeFileSync(path.join(values.patches, `${line.id}.patch`), line.patch);
    }
    for (const line of lines) {
      if (values.json) ctx.io.stdout.write(`${JSON.stringify(line)}\n`);
      else {
        const text = (line.error ?? line.result).replace(/\s+/g, ' ').trim();
        ctx.io.stdout.write(`${line.id}\t${line.conclusion}\t$${line.costUsd.toFixed(4)}\t${line.turns}\t${text.length > 100 ? `${text.slice(0, 99)}…` : text}\n`);
      }
    }
    return 0;
  } finally {
    await fleet.close();
  }
}
