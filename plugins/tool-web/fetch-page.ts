/** Fetching one page over http(s): redirects within limits, a byte cap, and the cross-host redirect rule. */
export interface FetchLimits {
  maxBytes: number;
  maxRedirects: number;
  timeoutMs: number;
}

export type FetchOutcome =
  | { kind: 'page'; url: string; status: number; statusText: string; contentType: string; body: Buffer; truncated: boolean }
  | { kind: 'cross-host'; from: string; to: string; status: number };

export class FetchError extends Error {}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

const bareHost = (url: URL) => url.hostname.replace(/^www\./, '');

/** `fetchImpl` is the `network` service's fetch when a proxy is set (index.ts). */
export async function fetchPage(start: string, limits: FetchLimits, signal: AbortSignal, fetchImpl: typeof fetch = (input, init) => fetch(input, init)): Promise<FetchOutcome> {
  const combined = AbortSignal.any([signal, AbortSignal.timeout(limits.timeoutMs)]);
  let current = new URL(start);
  for (let hop = 0; ; hop++) {
    let res: Response;
    try {
      res = await fetchImpl(current, {
        redirect: 'manual',
        signal: combined,
        headers: { 'user-agent': 'Keel web_fetch', accept: 'text/html, text/markdown, text/plain;q=0.9, application/json;q=0.9, */*;q=0.5' },
      });
    } catch (err) {
      if (signal.aborted) throw err;
      if (combined.aborted) throw new FetchError(`${current.href} did not answer within ${limits.timeoutMs} ms`);
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      // The network plugin's refusals (a proxy's 407 or 403) are one line already: keep it whole.
      const said = (err as Error).name === 'KeelError' ? (err as Error).message : undefined;
      throw new FetchError(`could not fetch ${current.href}: ${said ?? cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      const next = new URL(location, current);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new FetchError(`${current.href} redirects to ${next.href}, which is not http(s)`);
      if (bareHost(next) !== bareHost(current)) return { kind: 'cross-host', from: current.href, to: next.href, status: res.status };
      if (hop >= limits.maxRedirects) throw new FetchError(`${start} redirected more than ${limits.maxRedirects} times`);
      current = next;
      continue;
    }
    let read: { body: Buffer; truncated: boolean };
    try {
      read = await readCapped(res, limits.maxBytes);
    } catch (err) {
      if (signal.aborted) throw err;
      if (combined.aborted) throw new FetchError(`${current.href} did not finish sending the page within ${limits.timeoutMs} ms`);
      throw new FetchError(`reading ${current.href} failed: ${(err as Error).message}`);
    }
    const { body, truncated } = read;
    return { kind: 'page', url: current.href, status: res.status, statusText: res.statusText, contentType: res.headers.get('content-type') ?? '', body, truncated };
  }
}

async function readCapped(res: Response, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  if (!res.body) return { body: Buffer.alloc(0), truncated: false };
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { body: Buffer.concat(chunks), truncated: false };
    chunks.push(Buffer.from(value));
    size += value.byteLength;
    if (size >= maxBytes) {
      await reader.cancel();
      return { body: Buffer.concat(chunks).subarray(0, maxBytes), truncated: true };
    }
  }
}
