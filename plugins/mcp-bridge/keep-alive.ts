/**
 * Servers' pipes, sockets and timers never keep Keel alive on their own, so a finished run exits at once
 * (its exit hook kills the stdio servers). Whoever waits on a server — a call, a search waiting for servers
 * to connect, `keel mcp list` — holds the process open for the wait.
 */
let holders = 0;
let timer: NodeJS.Timeout | undefined;

export async function holdOpen<T>(work: () => Promise<T>): Promise<T> {
  if (holders++ === 0) timer = setInterval(() => undefined, 60_000);
  try {
    return await work();
  } finally {
    if (--holders === 0) clearInterval(timer);
  }
}
