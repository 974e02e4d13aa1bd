/**
 * The Redis connection of a session store: fails fast when Redis cannot be reached at start (one line naming the
 * URL), and once connected rides out a restart of Redis by reconnecting for a bounded time, commands queued in order.
 */
import { Redis } from 'ioredis';
import { KeelError } from '../../kernel/index.js';

/** How long a connected store keeps reconnecting before it gives up (Redis restarting, a network blip). */
const RECONNECT_FOR_MS = 60_000;
/** How long a store waits for Redis at start before the run stops with one line naming the URL. */
const CONNECT_FOR_MS = 5_000;

export async function connectRedis(url: string, what: string, waitMs = CONNECT_FOR_MS): Promise<Redis> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const attempt = await connectOnce(url);
    if ('client' in attempt) return attempt.client;
    // Redis restarting (a fleet's Redis is restarted under running workers) is waited for, briefly.
    if (Date.now() >= deadline) throw new KeelError(`${what}: cannot reach Redis at ${redactUrl(url)}: ${attempt.error.message || String(attempt.error)}`, { exitCode: 2 });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function connectOnce(url: string): Promise<{ client: Redis } | { error: Error }> {
  let giveUpAt = 0;
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: null,
    retryStrategy(times) {
      if (times === 1) giveUpAt = Date.now() + RECONNECT_FOR_MS;
      return Date.now() > giveUpAt ? null : Math.min(times * 100, 1_000);
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

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}
