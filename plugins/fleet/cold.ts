/** `keel fleet …`: the sub-commands, loaded only when one runs (with BullMQ and ioredis). */
import type { Io, Kernel, Services } from '../../kernel/index.js';
import { KeelError } from '../../kernel/index.js';
import { cancelCommand, retryCommand } from './control.js';
import { resultsCommand } from './results.js';
import { resolveSettings, type FleetSettings } from './settings.js';
import { statusCommand } from './status.js';
import { submitCommand } from './submit.js';
import { workCommand } from './work.js';

export interface CommandContext {
  kernel: Kernel;
  settings: FleetSettings;
  /** Connections to Redis (the `redis` plugin's). */
  redis: Services['redis'];
  io: Io;
  env: NodeJS.ProcessEnv;
}

export const HELP: Record<string, string> = {
  fleet: `Usage: keel fleet <command> [options]

Many headless keel runs on BullMQ and Redis (fleet.redisUrl in the config, else KEEL_REDIS_URL, else redis.url).

Commands:
  submit <tasks.jsonl | ->     queue tasks (one JSON object a line); a bad line queues nothing
  work [--concurrency N]       run tasks: each in its own checkout, as a headless keel run
  status [--watch] [--json]    counts, running tasks with progress, cost so far, rate-limit state
  results [--json] [--patches DIR]   one line per finished task: id, conclusion, cost, turns, result
  cancel <id | --all>          remove waiting tasks, abort running ones
  retry <id>                   run a failed or finished task again

keel fleet <command> --help shows a command's options.`,
  submit: `Usage: keel fleet submit <tasks.jsonl | -> [--json]

Each line is a task: {"id"?, "repo" (git URL or path) and "ref"?, or "cwd", "prompt", "preset"?, "permissionMode"?,
"maxTurns"?, "maxBudgetUsd"?, "jsonSchema"?, "env"? (names of the worker's environment variables to pass)}.
The whole file is validated first: a bad line is reported with its number and nothing is queued.
  --json   print the queued ids as JSON`,
  work: `Usage: keel fleet work [--concurrency N]

Takes tasks from the queue and runs each in a checkout of its own (under fleet.workDir, removed after) as
keel -p … --output-format stream-json. SIGTERM drains: no new task; running ones finish (or, after
fleet.drainTimeoutMs or a second SIGTERM, are handed back to the queue for another worker).
  --concurrency N   tasks at once (default fleet.concurrency, else 1)`,
  status: `Usage: keel fleet status [--watch] [--json]

  --watch   redraw every second until interrupted
  --json    one JSON object`,
  results: `Usage: keel fleet results [--json] [--patches DIR]

  --json          one JSON object a line, with the full result and the patch
  --patches DIR   also write each task's final diff to DIR/<id>.patch`,
  cancel: `Usage: keel fleet cancel <id | --all>

Removes a waiting task, or aborts a running one (its run stops; the task fails as cancelled).
  --all   every waiting and running task`,
  retry: `Usage: keel fleet retry <id>

Queues a failed or finished task again (its run resumes its session).`,
};

export async function fleetCommand(kernel: Kernel, args: string[], ctx: { io: Io; env: NodeJS.ProcessEnv }): Promise<number> {
  const [name, ...rest] = args;
  const print = (text: string) => ctx.io.stdout.write(`${text}\n`);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    print(HELP.fleet);
    return name ? 0 : 2;
  }
  if (!(name in HELP) || name === 'fleet') {
    ctx.io.stderr.write(`keel: fleet: unknown command "${name}" (one of submit, work, status, results, cancel, retry)\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    print(HELP[name]);
    return 0;
  }
  const redis = kernel.services.require('redis', 'fleet');
  const settings = resolveSettings(kernel.config.fleet, redis.url(ctx.env));
  if ('error' in settings) throw new KeelError(settings.error, { exitCode: 2 });
  const command: CommandContext = { kernel, settings, redis, io: ctx.io, env: ctx.env };
  switch (name) {
    case 'submit':
      return submitCommand(command, rest);
    case 'work':
      return workCommand(command, rest);
    case 'status':
      return statusCommand(command, rest);
    case 'results':
      return resultsCommand(command, rest);
    case 'cancel':
      return cancelCommand(command, rest);
    default:
      return retryCommand(command, rest);
  }
}

/** Parses a command's options with node's parseArgs; a wrong one is a one-line error naming it (exit 2). */
export async function parse<T extends Record<string, { type: 'string' | 'boolean' }>>(
  command: string,
  args: string[],
  options: T,
): Promise<{ values: { [K in keyof T]?: T[K]['type'] extends 'string' ? string : boolean }; positionals: string[] }> {
  const { parseArgs } = await import('node:util');
  try {
    const parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
    return parsed as never;
  } catch (err) {
    throw new KeelError(`fleet ${command}: ${(err as Error).message.split('\n')[0]} (keel fleet ${command} --help)`, { exitCode: 2 });
  }
}
