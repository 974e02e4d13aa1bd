/**
 * Connections to the fleet's Redis. A command fails fast with one line naming the URL when Redis cannot be reached
 * at start; a worker that is running rides out a restart of Redis (reconnecting for a bounded time, then stopping
 * with the same line rather than retrying for ever).
 */
import { Redis } from 'ioredis';
import { KeelError } from '../../kernel/index.js';

const RECONNECT_FOR_MS = 60_000;

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

export function unreachable(url: string, err: unknown): KeelError {
  const why = err instanceof Error ? err.message || err.name : String(err);
  return new KeelError(`fleet: cannot reach Redis at ${redactUrl(url)}: ${why}`, { exitCode: 2 });
}

/** A connection for BullMQ (which wants maxRetriesPerRequest null), already connected, or the one-line error. */
export async function connect(url: string, onGiveUp?: (err: Error) => void): Promise<Redis> {
  let failingSince = 0;
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: null,
    retryStrategy(times) {
      if (times === 1) failingSince = Date.now();
      if (Date.now() - failingSince > RECONNECT_FOR_MS) {
        onGiveUp?.(unreachable(url, new Error(`no connection for ${RECONNECT_FOR_MS / 1000} s`)));
        return null;
      }
      return Math.min(times * 100, 1_000);
    },
  });
  let lastError: Error | undefined;
  client.on('error', (err: Error) => (lastError = err));
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    // The client's own error (ECONNREFUSED, ENOTFOUND, NOAUTH) says more than its "Connection is closed."
    throw unreachable(url, lastError ?? err);
  }
  return client;
}
