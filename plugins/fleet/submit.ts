/** `keel fleet submit <tasks.jsonl | ->`: validates the whole file, then queues every task at once (or none). */
import { readFile } from 'node:fs/promises';
import { KeelError } from '../../kernel/index.js';
import { parse, type CommandContext } from './cold.js';
import { openQueue } from './queue.js';
import { parseTasks, TaskFileError } from './tasks.js';

export async function submitCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = await parse('submit', args, { json: { type: 'boolean' } });
  if (positionals.length !== 1) throw new KeelError('fleet submit: give one tasks file, or - for standard input (keel fleet submit --help)', { exitCode: 2 });
  const source = positionals[0];
  let text: string;
  try {
    text = source === '-' ? await readStream(ctx.io.stdin) : await readFile(source, 'utf8');
  } catch (err) {
    throw new KeelError(`fleet submit: cannot read ${source}: ${(err as Error).message}`, { exitCode: 2 });
  }
  let tasks;
  try {
    tasks = parseTasks(text, source === '-' ? '(stdin)' : source, ctx.kernel.config.cwd);
  } catch (err) {
    if (err instanceof TaskFileError) throw new KeelError(`fleet submit: ${err.message}; nothing was queued`, { exitCode: 2 });
    throw err;
  }
  const fleet = await openQueue(ctx);
  try {
    // BullMQ ignores an add whose id exists: an id already in the fleet would silently not run, so say so instead.
    for (const task of tasks) {
      const existing = await fleet.queue.getJob(task.id);
      if (existing) {
        const state = await existing.getState();
        throw new KeelError(`fleet submit: task "${task.id}" is already in the fleet (${state}); give it another id, or keel fleet retry ${task.id}; nothing was queued`, { exitCode: 2 });
      }
    }
    const now = Date.now();
    await fleet.queue.addBulk(
      tasks.map((task) => ({ name: 'task', data: { task, submittedAt: now }, opts: { jobId: task.id, attempts: ctx.settings.attempts, backoff: { type: 'exponential', delay: 1_000 }, removeOnComplete: false, removeOnFail: false } })),
    );
    if (values.json) ctx.io.stdout.write(`${JSON.stringify({ queued: tasks.map((t) => t.id) })}\n`);
    else ctx.io.stdout.write(`queued ${tasks.length} task${tasks.length === 1 ? '' : 's'}: ${tasks.map((t) => t.id).join(', ')}\n`);
    return 0;
  } finally {
    await fleet.close();
  }
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
