/**
 * fleet: many headless Keel runs across many machines, on BullMQ and Redis. `keel fleet submit|work|status|results|
 * cancel|retry` (the code, and BullMQ with it, is the cold part: a plain `keel -p` never loads it).
 *
 * In a run that a fleet worker started (KEEL_FLEET_BROKER set), this plugin also asks the worker's broker for a
 * token before every model request (the fleet-wide rate), reports the run's cost, keeps the task's own budget, and
 * stops the run when its worker dies.
 */
import { definePlugin, KeelError, Stage, type Session } from '../../kernel/index.js';
import { acquireToken } from './broker-client.js';
import { fleetConfigSchema, type FleetConfig } from './settings.js';

const NAME = 'fleet';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    fleet?: FleetConfig;
  }
}

/** How often a run checks that the worker which started it is still alive. */
const PARENT_CHECK_MS = 300;

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  // Its connections to Redis are the `redis` plugin's service (fleet's commands only: a run taps nothing of it).
  dependencies: ['redis'],
  config: { fleet: fleetConfigSchema },
  apply(kernel) {
    kernel.subcommands.register({
      name: 'fleet',
      description: 'run many headless keel tasks on BullMQ and Redis: submit, work, status, results, cancel, retry (keel fleet --help)',
      // `keel fleet --help` is printed by the CLI from this; `keel fleet <command> --help` by the command itself.
      usage: [
        'keel fleet <command> [options]',
        '',
        'Commands:',
        '  submit <tasks.jsonl | ->     queue tasks (one JSON object a line); a bad line queues nothing',
        '  work [--concurrency N]       run tasks: each in its own checkout, as a headless keel run',
        '  status [--watch] [--json]    counts, running tasks with progress, cost so far, rate-limit state',
        '  results [--json] [--patches DIR]   one line per finished task: id, conclusion, cost, turns, result',
        '  cancel <id | --all>          remove waiting tasks, abort running ones',
        '  retry <id>                   run a failed or finished task again',
        '',
        'keel fleet <command> --help shows a command\'s options.',
      ].join('\n'),
      async run(args, ctx) {
        const { fleetCommand } = await import('./cold.js');
        return fleetCommand(kernel, args, ctx);
      },
    });

    // Only a run that a fleet worker started taps anything: every other run pays nothing for this plugin.
    const broker = process.env.KEEL_FLEET_BROKER;
    if (!broker) return;
    let costUsd = 0;
    let turns = 0;
    let watching: NodeJS.Timeout | undefined;

    kernel.hooks.sessionStart.tapPromise(NAME, async (_session: Session) => {
      if (watching) return;
      // A worker killed with kill -9 leaves its runs behind: each stops itself (SIGTERM: its session is saved and its
      // lock freed), so the worker that takes the task over resumes a session nobody writes any more.
      const parent = process.ppid;
      watching = setInterval(() => {
        if (process.ppid !== parent) {
          clearInterval(watching);
          process.kill(process.pid, 'SIGTERM');
        }
      }, PARENT_CHECK_MS);
      watching.unref();
    });

    kernel.hooks.event.tap(NAME, (event) => {
      if (event.type === 'usage') costUsd += event.costUsd;
      else if (event.type === 'assistant_message') turns++;
    });

    kernel.hooks.query.tapPromise({ name: NAME, stage: Stage.EARLY }, async (request) => {
      const max = Number(process.env.KEEL_FLEET_MAX_BUDGET_USD);
      if (max > 0 && costUsd >= max) throw new KeelError(`the task's budget of $${max} is spent ($${costUsd.toFixed(4)})`, { code: 'budget' });
      await acquireToken(broker, { costUsd, turns, signal: request.signal });
      return undefined;
    });
  },
}));
