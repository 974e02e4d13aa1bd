/**
 * Connections to Redis, for the fleet and session-store-redis (the `redis` service). A connection fails fast with one
 * line naming the URL when Redis cannot be reached at start (after `waitMs` of trying, when asked to wait); once
 * connected it rides out a restart of Redis (reconnecting for `redis.reconnectForMs`, commands queued in order, then
 * giving up with the same line rather than retrying for ever). Loaded on the first connection, and ioredis with it.
 */
import { Redis } from 'ioredis';
import { KeelError } from '../../kernel/index.js';
import type { RedisConnectOptions } from './index.js';
import { redactUrl } from './redact.js';
import type { RedisSettings } from './settings.js';

function unreachable(what: string, url: string, err: unknown): KeelError {
  const why = err instanceof Error ? err.message || err.name : String(err);
  return new KeelError(`${what}: cannot reach Redis at ${redactUrl(url)}: ${why}`, { exitCode: 2 });
}

/** A connection for BullMQ (which wants maxRetriesPerRequest null), already connected, or the one-line error. */
export async function connect(url: string, { what, waitMs = 0, onGiveUp }: RedisConnectOptions, settings: RedisSettings): Promise<Redis> {
  const deadline = Date.now() + waitMs;
  const giveUp = () => onGiveUp?.(unreachable(what, url, new Error(`no connection for ${settings.reconnectForMs / 1000} s`)));
  for (;;) {
    const attempt = await connectOnce(url, giveUp, settings);
    if ('client' in attempt) return attempt.client;
    if (Date.now() >= deadline) throw unreachable(what, url, attempt.error);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function connectOnce(url: string, giveUp: () => void, settings: RedisSettings): Promise<{ client: Redis } | { error: Error }> {
  let failingSince = 0;
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: settings.connectTimeoutMs,
    maxRetriesPerRequest: null,
    retryStrategy(times) {
      if (times === 1) failingSince = Date.now();
      if (Date.now() - failingSince > settings.reconnectForMs) {
        giveUp();
        return null;
      }
      return Math.min(times * 100, 1_000);
    },
  });
  let lastError: Error | undefined;
  client.on('error', (err: Error) => (lastError = err));
  try {
    await client.connect();
    return { client };
  } catch (err) {
    client.disconnect();
    // The client's own error (ECONNREFUSED, ENOTFOUND, NOAUTH) says more than its "Connection is closed."
    return { error: lastError ?? (err as Error) };
  }
}
