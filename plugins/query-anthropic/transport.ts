/**
 * The HTTP path under the SDK: a `fetch` over Keel's HTTP/1.1 client (http-client.ts) with keep-alive. Node's global
 * fetch (undici) costs, per request, a USVString pass over the whole JSON body, a Request object and a web-stream
 * copy of the body — work that grows with the history — and about 25 ms to load; node:http about 3 ms a run. Here
 * the body goes out as Buffers written at once and the response is a `StreamResponse` over the socket's bytes. A
 * request whose history and tools were serialised ahead (`fetchOptions[PREBUILT]`, see body.ts) has those bytes
 * spliced into the SDK's body instead of serialising them again. Every received chunk calls the attempt's `alive`
 * (passed in `fetchOptions[ALIVE]`), which feeds the retry policy's idle watchdog: pings count as life, as they should.
 */
import { EventEmitter } from 'node:events';
import zlib from 'node:zlib';
import { PREBUILT, splicePrebuilt, type PrebuiltPart } from './body.js';
import { FetchHeaders } from './headers.js';
import { request, type Request, type RequestOptions, type Response as HttpResponse, type Route } from './http-client.js';
import { ResponseBody } from './response-body.js';

/** `fetchOptions` key for the attempt's watchdog callback. */
export const ALIVE = Symbol.for('keel.query-anthropic.alive');
/**
 * `fetchOptions` key for the attempt's abort signal, which the SDK is not given (stream.ts): the SDK would hang a
 * listener on it that lives until the response body is collected, through a FinalizationRegistry whose entries
 * keep every body alive into the old generation.
 */
export const ATTEMPT_SIGNAL = Symbol.for('keel.query-anthropic.signal');

/** `fetchOptions` key for how to connect to a URL when not directly (the `network` service: proxies, client certificates). */
export const ROUTE = Symbol.for('keel.query-anthropic.route');

/** `ALIVE` is called on the response headers (no argument) and on every chunk of the body (with it). */
type Init = RequestInit & { [ALIVE]?: (chunk?: Uint8Array) => void; [PREBUILT]?: PrebuiltPart[]; [ATTEMPT_SIGNAL]?: AbortSignal; [ROUTE]?: (url: URL) => Route | undefined };

/**
 * Sends a request over the HTTP client. Replaced only by the start-up snapshot's warm-up (scripts/binary/warm-up.ts),
 * which runs a real one-turn `keel -p` while the snapshot is built, with a stand-in for the connection.
 */
export const requestSender: { send: (url: URL, options: RequestOptions) => Request } = { send: request };

/**
 * How long a connection whose answer is complete (`message_stop`) may take to end its body before it is dropped
 * rather than kept for the next request.
 */
const SETTLE_GRACE_MS = 1000;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function headersOf(init: Init): Record<string, string> {
  const out: Record<string, string> = {};
  const source = init.headers;
  if (!source) return out;
  if (typeof (source as Headers).forEach === 'function' && !Array.isArray(source)) (source as Headers).forEach((value, key) => (out[key] = value));
  else if (Array.isArray(source)) for (const [key, value] of source) out[key.toLowerCase()] = value;
  else for (const [key, value] of Object.entries(source)) out[key.toLowerCase()] = String(value);
  return out;
}

function bodyOf(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('keel transport: request bodies must be strings or bytes');
}

/** The response's bytes as `data`, `end` and `error` events, decoded when the server compressed them anyway. */
function decoded(res: HttpResponse): EventEmitter {
  const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
  const inflate =
    encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip() : encoding === 'deflate' ? zlib.createInflate() : encoding === 'br' ? zlib.createBrotliDecompress() : undefined;
  if (!inflate) return res;
  res.on('data', (chunk: Buffer) => inflate.write(chunk));
  res.on('end', () => inflate.end());
  return inflate;
}

export const nodeFetch: typeof fetch = (input, init: Init = {}) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return reject(new TypeError(`keel transport: unsupported protocol ${url.protocol}`));
    const signal = init.signal ?? undefined;
    const attempt = init[ATTEMPT_SIGNAL];
    if (signal?.aborted) return reject(abortReason(signal));
    if (attempt?.aborted) return reject(abortReason(attempt));
    const alive = init[ALIVE] ?? (() => undefined);
    let body: Buffer[] | undefined;
    try {
      const prebuilt = init[PREBUILT];
      if (prebuilt && typeof init.body === 'string') body = splicePrebuilt(init.body, prebuilt);
      else {
        const whole = bodyOf(init.body);
        body = whole ? [whole] : undefined;
      }
    } catch (err) {
      return reject(err);
    }
    const headers = headersOf(init);
    if (body) headers['content-length'] = String(body.reduce((sum, chunk) => sum + chunk.length, 0));
    let route: Route | undefined;
    try {
      route = init[ROUTE]?.(url);
    } catch (err) {
      return reject(err);
    }
    const outgoing = requestSender.send(url, { method: init.method ?? 'GET', headers, ...(route ? { route } : {}) });
    let settled = false;
    let fail: (err: unknown) => void = (err) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    const onAbort = () => {
      const reason = abortReason(signal?.aborted ? signal : attempt!);
      outgoing.destroy();
      fail(reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    attempt?.addEventListener('abort', onAbort, { once: true });
    const release = () => {
      signal?.removeEventListener('abort', onAbort);
      attempt?.removeEventListener('abort', onAbort);
    };
    outgoing.on('error', (err) => {
      release();
      fail(new TypeError(`fetch failed: ${errorText(err)}`, { cause: err }));
    });
    outgoing.on('response', (res: HttpResponse) => {
      settled = true;
      alive();
      const source = decoded(res);
      const body = new ResponseBody(
        () => {
          release();
          res.destroy();
        },
        () => {
          release();
          res.settle(SETTLE_GRACE_MS);
        },
      );
      fail = (err) => body.fail(err);
      source.on('data', (chunk: Buffer) => {
        const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        alive(bytes);
        body.push(bytes);
      });
      source.on('end', () => {
        release();
        body.end();
      });
      // The failure names its cause (a short body, a bad chunk), not only undici's "terminated".
      source.on('error', (err) => {
        release();
        body.fail(new TypeError(errorText(err), { cause: err }));
      });
      res.on('close', () => {
        release();
        if (!res.complete) body.fail(new TypeError('the connection closed before the response ended'));
      });
      const responseHeaders = new FetchHeaders();
      for (let i = 0; i < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
      const noBody = res.statusCode === 204 || res.statusCode === 304 || init.method === 'HEAD';
      const response = new StreamResponse(noBody ? null : body, { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: responseHeaders, url: url.href });
      resolve(response as unknown as Response);
    });
    // The head and the pieces leave together when the request ends (one writev), uncopied.
    for (const chunk of body ?? []) outgoing.write(chunk);
    outgoing.end();
  });

interface StreamResponseInit {
  status: number;
  statusText: string;
  headers: FetchHeaders;
  url: string;
}

/** A response's bytes: the transport's `ResponseBody`, or a web stream. */
type Body = ResponseBody | ReadableStream<Uint8Array>;

/**
 * What a client reads of a fetch `Response`: status, headers, `body`, the body readers (`text`, `json`,
 * `arrayBuffer`, `bytes`, `blob`) and `clone`. As with a `Response`, the body can be read once.
 */
export class StreamResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: FetchHeaders;
  readonly url: string;
  readonly redirected = false;
  readonly type = 'basic';
  #body: Body | null;
  #used = false;

  constructor(body: Body | null, init: StreamResponseInit) {
    this.#body = body;
    this.status = init.status;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.url = init.url;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  /** Typed as fetch's; the SDK reads a `ResponseBody` by async iteration, as it reads a web stream. */
  get body(): ReadableStream<Uint8Array> | null {
    return this.#body as ReadableStream<Uint8Array> | null;
  }

  /** True once the body is being read, by a reader method or through `body`. */
  get bodyUsed(): boolean {
    return this.#used || (this.#body?.locked ?? false);
  }

  async bytes(): Promise<Uint8Array> {
    if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    if (!this.#body) return new Uint8Array(0);
    const chunks: Uint8Array[] = [];
    const reader = this.#body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    return Buffer.concat(chunks);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.arrayBuffer()], { type: this.headers.get('content-type') ?? '' });
  }

  clone(): StreamResponse {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    let other: Body | null = null;
    if (this.#body) [this.#body, other] = this.#body.tee();
    return new StreamResponse(other, { status: this.status, statusText: this.statusText, headers: new FetchHeaders(this.headers), url: this.url });
  }
}
