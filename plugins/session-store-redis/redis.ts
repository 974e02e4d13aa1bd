/**
 * The Redis connection of a session store: fails fast when Redis cannot be reached at start (one line naming the
 * URL), and once connected rides out a restart of Redis by reconnecting for a bounded time, commands queued in order.
 */
import { Redis } from 'ioredis';
import { KeelError } from '../../kernel/index.js';

/** How long a connected store keeps reconnecting before it gives up (Redis restarting, a network blip). */
const RECONNECT_FOR_MS = 60_000;

export async function connectRedis(url: string, what: string): Promise<Redis> {
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
  // Errors surface through the commands that fail; the client's own error events are not news.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw new KeelError(`${what}: cannot reach Redis at ${redactUrl(url)}: ${(err as Error).message || String(err)}`, { exitCode: 2 });
  }
  return client;
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
