/** `keel fleet cancel <id | --all>` and `keel fleet retry <id>`. */
import { KeelError } from '../../kernel/index.js';
import { parse, type CommandContext } from './cold.js';
import { fleetKeys } from './keys.js';
import { openQueue } from './queue.js';

export async function cancelCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = await parse('cancel', args, { all: { type: 'boolean' } });
  if (values.all === (positionals.length === 1) || positionals.length > 1) throw new KeelError('fleet cancel: give one task id, or --all (keel fleet cancel --help)', { exitCode: 2 });
  const keys = fleetKeys(ctx.settings.queue);
  const fleet = await openQueue(ctx);
  try {
    const jobs = values.all ? await fleet.queue.getJobs(['waiting', 'prioritized', 'delayed', 'active']) : [await fleet.queue.getJob(positionals[0])];
    const job0 = jobs[0];
    if (!values.all && !job0) throw new KeelError(`fleet cancel: no task "${positionals[0]}" in queue ${ctx.settings.queue}`, { exitCode: 2 });
    let removed = 0;
    let aborted = 0;
    for (const job of jobs) {
      if (!job) continue;
      const state = await job.getState();
      if (state === 'completed' || state === 'failed') {
        if (!values.all) throw new KeelError(`fleet cancel: task "${job.id}" has already ${state === 'completed' ? 'finished' : 'failed'}`, { exitCode: 2 });
        continue;
      }
      // Marked first: a worker that is just taking it, or missed the message, sees the mark before it starts.
      await fleet.redis.sadd(keys.cancelled, job.id!);
      if (state === 'active') {
        await fleet.redis.publish(keys.cancelChannel, job.id!);
        aborted++;
      } else {
        await job.remove().catch(async () => {
          // Taken by a worker in the meantime: abort it there.
          await fleet.redis.publish(keys.cancelChannel, job.id!);
          aborted++;
          removed--;
        });
        removed++;
      }
    }
    ctx.io.stdout.write(`cancelled ${removed + aborted} task${removed + aborted === 1 ? '' : 's'} (${removed} waiting removed, ${aborted} running aborted)\n`);
    return 0;
  } finally {
    await fleet.close();
  }
}

export async function retryCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const { positionals } = await parse('retry', args, {});
  if (positionals.length !== 1) throw new KeelError('fleet retry: give one task id (keel fleet retry --help)', { exitCode: 2 });
  const id = positionals[0];
  const keys = fleetKeys(ctx.settings.queue);
  const fleet = await openQueue(ctx);
  try {
    const job = await fleet.queue.getJob(id);
    if (!job) throw new KeelError(`fleet retry: no task "${id}" in queue ${ctx.settings.queue}`, { exitCode: 2 });
    const state = await job.getState();
    if (state !== 'failed' && state !== 'completed') throw new KeelError(`fleet retry: task "${id}" is ${state}; only a failed or finished task can be retried`, { exitCode: 2 });
    await fleet.redis.srem(keys.cancelled, id);
    await job.retry(state);
    ctx.io.stdout.write(`queued task ${id} again\n`);
    return 0;
  } finally {
    await fleet.close();
  }
}
