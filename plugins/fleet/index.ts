/**
 * fleet: many headless Keel runs across many machines, on BullMQ and Redis. `keel fleet submit|work|status|results|
 * cancel|retry` (the code, and BullMQ with it, is the cold part: a plain `keel -p` never loads it).
 *
 * In a run that a fleet worker started (KEEL_FLEET_BROKER set), this plugin also asks the worker's broker for a
 * token before every model request (the fleet-wide rate), reports the run's cost, keeps the task's own budget, and
 * stops the run when its worker dies.
 */
import type { Redis } from 'ioredis';
import { definePlugin, KeelError, Stage, type Session } from '../../kernel/index.js';
import { acquireToken } from './broker-client.js';
import { fleetConfigSchema, type FleetConfig } from './settings.js';

const NAME = 'fleet';

export interface RedisConnectOptions {
  /** Who connects, first in the one-line error: `fleet: cannot reach Redis at redis://…: connect ECONNREFUSED …`. */
  what: string;
  /** How long to keep trying at start (Redis restarting under running workers); one attempt when 0, the default. */
  waitMs?: number;
  /** Hears that one line when a connection, once made, stays lost for 60 s and the client stops reconnecting. */
  onGiveUp?: (err: KeelError) => void;
}

/** Connections to Redis (ioredis, with BullMQ's options), offered to session-store-redis; ioredis loads on the first. */
export interface RedisService {
  connect(url: string, opts: RedisConnectOptions): Promise<Redis>;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** Redis connections that fail fast at start and ride out a restart (plugin `fleet`). */
    redis: RedisService;
  }
}

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
  config: { fleet: fleetConfigSchema },
  apply(kernel) {
    kernel.services.provide('redis', {
      async connect(url, opts) {
        // Not through cold.js, which loads BullMQ with the fleet's commands: a fleet-worker run's session store needs
        // ioredis only (connection.ts is lazily initialised in the binary, so ioredis loads on the first connection).
        const { connect } = await import('./connection.js');
        return connect(url, opts);
      },
    });

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
