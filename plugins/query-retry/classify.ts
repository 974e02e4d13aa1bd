/** Sorts a failed attempt into "retry" (with the cause users see) or "give up". Structural, so it reads errors of any SDK. */

export type Verdict = { retry: false } | { retry: true; cause: string; /** The server's own wait (429 retry-after). */ waitMs?: number; /** No answer came: the endpoint is worth naming. */ connection?: true };

/** Statuses retried with exponential backoff. */
const BACKOFF_STATUSES = new Set([408, 409, 500, 502, 503, 504, 529]);

const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

interface ErrorShape {
  name?: unknown;
  message?: unknown;
  status?: unknown;
  code?: unknown;
  headers?: unknown;
  error?: unknown;
  cause?: unknown;
  retryable?: unknown;
}

export function classify(err: unknown, now: number): Verdict {
  if (typeof err !== 'object' || err === null) return { retry: false };
  const e = err as ErrorShape;
  const status = typeof e.status === 'number' ? e.status : undefined;
  if (status === 429) return { retry: true, cause: describeStatus(e, status), waitMs: retryAfterMs(e.headers, now) };
  if (status !== undefined) return BACKOFF_STATUSES.has(status) ? { retry: true, cause: describeStatus(e, status) } : { retry: false };
  // A provider marks a stream that broke after its headers (cut, malformed event, mid-stream error) as retryable.
  if (e.retryable === true) return { retry: true, cause: String(e.message ?? 'the stream broke') };
  // A certificate the client does not trust, or a header that cannot be sent, fails the same way every time.
  if (codeInChain(e, (code) => TLS_REFUSAL.test(code) || code === 'ERR_INVALID_CHAR')) return { retry: false };
  // A proxy that refuses the tunnel or the credentials, or a client certificate that cannot be used, refuses again.
  if (codeInChain(e, (code) => NETWORK_REFUSAL.has(code))) return { retry: false };
  if (isConnectionError(e)) return { retry: true, cause: `connection error: ${connectionDetail(e)}`, connection: true };
  return { retry: false };
}

/** The codes of the `network` plugin's refusals (plugins/network). */
const NETWORK_REFUSAL = new Set(['ERR_PROXY_AUTH', 'ERR_PROXY_REFUSED', 'ERR_PROXY_SETTING', 'ERR_CLIENT_CERT']);

/** Node's codes for a TLS peer it refuses: an untrusted, expired or misnamed certificate. */
const TLS_REFUSAL = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|^ERR_TLS_/;

function isConnectionError(e: ErrorShape): boolean {
  if (e.name === 'APIConnectionError' || e.name === 'APIConnectionTimeoutError') return true;
  return codeInChain(e, (code) => CONNECTION_CODES.has(code));
}

/** Whether the error or one of its causes (4 deep) carries a string `code` that `test` accepts. */
function codeInChain(e: ErrorShape, test: (code: string) => boolean): boolean {
  for (let cur: unknown = e, depth = 0; cur && typeof cur === 'object' && depth < 4; cur = (cur as ErrorShape).cause, depth++) {
    const code = (cur as ErrorShape).code;
    if (typeof code === 'string' && test(code)) return true;
  }
  return false;
}

/**
 * A system error's code (ECONNRESET), else the innermost cause's message: an SDK's "Connection error." wraps a
 * fetch's "fetch failed", which wraps what really happened (a malformed response head, say).
 */
function connectionDetail(e: ErrorShape): string {
  let innermost = typeof e.message === 'string' && e.message ? e.message : 'the connection failed';
  for (let cur: unknown = e.cause, depth = 0; cur && typeof cur === 'object' && depth < 4; cur = (cur as ErrorShape).cause, depth++) {
    const { code, message } = cur as ErrorShape;
    // The network plugin's errors name the proxy that could not be reached: their message says more than the code.
    if (typeof code === 'string') return (cur as { network?: unknown }).network === true ? String(message) : code;
    if (typeof message === 'string' && message) innermost = message;
  }
  return innermost;
}

/** "HTTP 529 overloaded_error: Overloaded", from Anthropic's or OpenAI's error body. */
export function describeStatus(e: ErrorShape, status: number): string {
  const body = e.error as { error?: unknown; type?: unknown; message?: unknown } | undefined;
  const inner = (body && typeof body === 'object' && body.error && typeof body.error === 'object' ? body.error : body) as
    | { type?: unknown; message?: unknown }
    | undefined;
  const type = typeof inner?.type === 'string' && inner.type !== 'error' ? ` ${inner.type}` : '';
  const message = typeof inner?.message === 'string' ? `: ${inner.message}` : '';
  return `HTTP ${status}${type}${message}`;
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  const h = headers as { get?: (n: string) => string | null } & Record<string, unknown>;
  if (typeof h.get === 'function') return h.get(name) ?? undefined;
  const value = h[name];
  return typeof value === 'string' ? value : undefined;
}

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date; undefined when neither is usable. */
export function retryAfterMs(headers: unknown, now: number): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const after = header(headers, 'retry-after');
  if (after === undefined || after.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(after.trim())) return Number(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
