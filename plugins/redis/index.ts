/**
 * redis: the connection to Redis that `fleet` and `session-store-redis` share, offered as the `redis` service — the
 * URL both fall back to, and connections that fail fast at start and ride out a restart of Redis. Neither the
 * connection code nor ioredis loads until the first connection: a plain `keel -p` pays nothing for this plugin.
 */
import type { Redis } from 'ioredis';
import { definePlugin, type KeelError } from '../../kernel/index.js';
import { redactUrl } from './redact.js';
import { redisConfigSchema, resolveRedisSettings, sharedUrl, type RedisConfig } from './settings.js';

const NAME = 'redis';

export interface RedisConnectOptions {
  /** Who connects, first in the one-line error: `fleet: cannot reach Redis at redis://…: connect ECONNREFUSED …`. */
  what: string;
  /** How long to keep trying at start (Redis restarting under running workers); one attempt when 0, the default. */
  waitMs?: number;
  /** Hears that one line when a connection, once made, stays lost for `redis.reconnectForMs` and the client stops reconnecting. */
  onGiveUp?: (err: KeelError) => void;
}

export interface RedisService {
  /** The shared URL: KEEL_REDIS_URL (of `env`, default this process's), else `redis.url`; undefined when neither is set. */
  url(env?: NodeJS.ProcessEnv): string | undefined;
  /** A connection (ioredis, with BullMQ's options), already connected, or the one-line error naming `what` and the URL. */
  connect(url: string, opts: RedisConnectOptions): Promise<Redis>;
  /** The URL with its password replaced by `***`, for messages. */
  redact(url: string): string;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** Redis connections that fail fast at start and ride out a restart (plugin `redis`). */
    redis: RedisService;
  }
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    redis?: RedisConfig;
  }
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { redis: redisConfigSchema },
  apply(kernel) {
    const service: RedisService = {
      url: (env = process.env) => sharedUrl(kernel.config.redis, env),
      async connect(url, opts) {
        // A module of the binary initialised on first use: ioredis loads with it, BullMQ never (that is fleet's).
        const { connect } = await import('./connection.js');
        return connect(url, opts, resolveRedisSettings(kernel.config.redis));
      },
      redact: redactUrl,
    };
    kernel.services.provide(NAME, service);

    // `keel doctor`: whether the shared URL is set, and Redis answers there (the client loads only when one is set).
    kernel.services.provide(`doctor:${NAME}`, {
      async checks() {
        const url = service.url();
        if (!url) return [{ name: NAME, ok: true, detail: 'no Redis URL (redis.url or KEEL_REDIS_URL): only keel fleet and session-store-redis need one' }];
        try {
          const client = await service.connect(url, { what: 'redis' });
          await client.quit().catch(() => client.disconnect());
          return [{ name: NAME, ok: true, detail: `Redis answers at ${redactUrl(url)}` }];
        } catch (err) {
          return [{ name: NAME, ok: false, detail: (err as Error).message }];
        }
      },
    });
  },
}));
