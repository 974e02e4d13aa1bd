/**
 * session-store-redis: a storage backend for session-store that keeps sessions on Redis Streams — one stream per
 * session, one entry per record — so `--resume <id>` works on any machine that reaches the same Redis. The records,
 * totals, repair rules, redaction and recorder are session-store's (its `session-records` service); this plugin
 * supplies the stream, its lock and the listing, and provides `session-backend` so the file store steps aside.
 * The preset `fleet-worker` adds it to the default agent.
 *
 * Records are queued from the synchronous event taps in the order they are made (one connection sends them in
 * order) and awaited at the end of every turn, so a `kill -9` loses at most the turn in flight; Redis's own
 * durability (AOF) covers the rest.
 */
import { z } from 'zod';
import { definePlugin, errorMessage, KeelError, Stage, type Kernel, type Services, type Session } from '../../kernel/index.js';
import type { Recorder } from './cold.js';
import { DEFAULT_PREFIX } from './keys.js';

const NAME = 'session-store-redis';

export interface RedisSessionsConfig {
  /** The Redis URL (default: the `redis` plugin's: KEEL_REDIS_URL, else redis.url). */
  url?: string;
  /**
   * How long the writer's lock lives without being extended (default: KEEL_REDIS_SESSION_LOCK_MS, else 30000 ms): a
   * killed writer's session is free after it. A fleet worker sets it for its runs to its own job lock's duration.
   */
  lockMs?: number;
  /**
   * The prefix of every key (default: KEEL_REDIS_SESSION_PREFIX, else `keel:`): streams are `<prefix>session:<id>`.
   * A fleet worker gives each task's run a prefix of its own, the only keys its Redis user reaches.
   */
  prefix?: string;
}

export interface SessionStoreRedisOptions extends RedisSessionsConfig {
  now?: () => number;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    redisSessions?: RedisSessionsConfig;
  }
}

/** A key prefix without glob characters: an ACL key pattern `<prefix>*` then covers exactly this store's keys. */
const PREFIX = /^[^*?[\]\\\s]+$/;

const configSchema = z
  .object({
    url: z.string().min(1).optional(),
    lockMs: z.number().int().min(100).optional(),
    prefix: z.string().regex(PREFIX, 'no spaces and none of * ? [ ] \\').optional(),
  })
  .strict();

type Cold = typeof import('./cold.js');
/** How long a store waits for Redis at start before the run stops with one line naming the URL. */
const CONNECT_FOR_MS = 5_000;
type Client = Awaited<ReturnType<Services['redis']['connect']>>;

export default definePlugin((opts: SessionStoreRedisOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  // The connection is the `redis` plugin's service (fail fast at start, ride out a restart of Redis).
  dependencies: ['session-store', 'redis'],
  config: { redisSessions: configSchema },
  apply(kernel) {
    const records = kernel.services.require('session-records', NAME);
    const open = new Set<Session>();
    let lastActive: Session | undefined;
    let connection: { cold: Cold; client: Client } | undefined;
    let connecting: Promise<{ cold: Cold; client: Client }> | undefined;

    // A run a fleet worker started: the worker chose its Redis user and key prefix (only its task's keys), so a
    // config's redisSessions.url or .prefix never widens what the run reaches.
    const fleetRun = Boolean(process.env.KEEL_FLEET_BROKER && process.env.KEEL_REDIS_URL);
    const url = () => {
      const value = opts.url ?? (fleetRun ? undefined : kernel.config.redisSessions?.url) ?? kernel.services.require('redis', NAME).url();
      if (!value) throw new KeelError(`${NAME}: no Redis URL: set redis.url (or redisSessions.url) in the config, or KEEL_REDIS_URL`, { exitCode: 2 });
      return value;
    };
    const prefix = () => {
      const [value, from] =
        opts.prefix !== undefined ? [opts.prefix, 'prefix option'] : kernel.config.redisSessions?.prefix !== undefined && !(fleetRun && process.env.KEEL_REDIS_SESSION_PREFIX) ? [kernel.config.redisSessions.prefix, 'redisSessions.prefix'] : [process.env.KEEL_REDIS_SESSION_PREFIX ?? DEFAULT_PREFIX, 'KEEL_REDIS_SESSION_PREFIX'];
      if (!PREFIX.test(value)) throw new KeelError(`${NAME}: ${from}: "${value}" has a space or one of * ? [ ] \\`, { exitCode: 2 });
      return value;
    };
    const connect = () =>
      (connecting ??= (async () => {
        const cold = await import('./cold.js');
        // Redis restarting (a fleet's Redis is restarted under running workers) is waited for, briefly.
        const client = await kernel.services.require('redis', NAME).connect(url(), { what: NAME, waitMs: CONNECT_FOR_MS });
        connection = { cold, client };
        return connection;
      })().catch((err: unknown) => {
        connecting = undefined;
        throw err;
      }));

    kernel.hooks.sessionStart.tapPromise({ name: NAME, stage: Stage.EARLY }, async (session) => {
      const { cold, client } = await connect();
      const rec = await cold.openOrResume(records, kernel, client, session, {
        url: url(),
        prefix: prefix(),
        lockMs: opts.lockMs ?? kernel.config.redisSessions?.lockMs ?? (Number(process.env.KEEL_REDIS_SESSION_LOCK_MS) || 30_000),
        now: opts.now ?? Date.now,
      });
      session.data.set(NAME, rec);
      open.add(session);
      lastActive = session;
    });

    kernel.hooks.event.tap(NAME, (event) => {
      const session = records.sessionOfEvent(event, [...open]) ?? lastActive;
      const rec = session && recorderOf(session);
      if (!session || !rec || rec.sink.failed) return;
      lastActive = session;
      guarded(kernel, rec, () => records.recordEvent(event, session, rec));
    });

    // The end of a turn is its commit: every record of it is in Redis before the next request goes out.
    kernel.hooks.postTurn.tapPromise({ name: NAME, stage: Stage.LATE }, async (_record, turn) => {
      const rec = recorderOf(turn.session);
      if (!rec || rec.sink.failed || !connection) return;
      guarded(kernel, rec, () => records.syncMessages(turn.session, rec));
      await rec.sink.flush();
    });

    /** Flushes, releases the lock, and lets the connection go when no session is open (the process may then exit). */
    const close = async (session: Session) => {
      const rec = recorderOf(session);
      open.delete(session);
      if (rec) {
        if (!rec.sink.failed) guarded(kernel, rec, () => records.syncMessages(session, rec));
        await rec.sink.flush();
        await rec.sink.release().catch(() => undefined);
        session.data.delete(NAME);
      }
      if (open.size === 0 && connection) {
        const { client } = connection;
        connection = undefined;
        connecting = undefined;
        await client.quit().catch(() => client.disconnect());
      }
    };

    /** For work outside a session (`keel sessions`): the connection is let go after, unless a session holds it. */
    const withClient = async <T>(fn: (c: { cold: Cold; client: Client }) => Promise<T>): Promise<T> => {
      const c = await connect();
      try {
        return await fn(c);
      } finally {
        if (open.size === 0 && connection === c) {
          connection = undefined;
          connecting = undefined;
          await c.client.quit().catch(() => c.client.disconnect());
        }
      }
    };

    kernel.services.provide('session-backend', {
      sessionsDescription: 'list the sessions in Redis (id, last activity, turns, cost, first prompt); --all for every project',
      sessionsCommand(args, session) {
        const words = args.split(/\s+/);
        return withClient(async ({ cold, client }) => {
          const list = await cold.listSessions(records, client, prefix(), words.includes('--all') ? undefined : session.projectRoot);
          return words.includes('--json') ? JSON.stringify(list) : cold.formatList(list);
        });
      },
      whereIs: (session) => `Redis stream ${recorderOf(session)?.sink.key ?? '(nothing recorded yet)'}`,
      list: (projectRoot) => withClient(({ cold, client }) => cold.listSessions(records, client, prefix(), projectRoot)),
      close(session) {
        void close(session).catch((err: unknown) => kernel.log('error', `${NAME}: closing session ${session.id}: ${errorMessage(err)}`, NAME));
      },
      persist(session) {
        const rec = recorderOf(session);
        if (rec && !rec.sink.failed) guarded(kernel, rec, () => records.syncMessages(session, rec));
      },
    });
  },
}));

function recorderOf(session: Session): Recorder | undefined {
  return session.data.get(NAME) as Recorder | undefined;
}

function guarded(kernel: Kernel, rec: Recorder, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    kernel.log('error', `${NAME}: cannot record session ${rec.sink.id}: ${errorMessage(err)}`, NAME);
  }
}
