/**
 * `fetch` over node:http(s) with the network's request options, for fetch-based clients (the OpenAI SDK, `web_fetch`,
 * `web_search`, the MCP bridge's remote transports): Node's own fetch cannot be given a proxy on Node 20, nor
 * unreferenced sockets. Redirects are followed unless `redirect` is `manual` (the caller reads the 3xx) or `error`; a
 * proxy that asks for credentials on a forwarded plain-http request fails with the same one line as a refused tunnel.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { ConnectOptions, Network } from './cold.js';

/** What the fetch needs of a network: request options for a URL, and a forwarded request's refusal by the proxy. */
export type Routes = Pick<Network, 'requestOptions' | 'refusal'>;

/** No proxy and no client certificate: every request connects directly. */
export const DIRECT: Routes = { requestOptions: (_url, headers) => ({ headers }), refusal: () => undefined };

const NULL_BODY = new Set([101, 204, 205, 304]);
const MAX_REDIRECTS = 20;

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError(`network fetch: unsupported request body (${Object.prototype.toString.call(body)})`);
}

function headersOf(init: RequestInit | undefined, request: Request | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers ?? request?.headers).forEach((value, key) => (out[key] = value));
  return out;
}

export async function nodeFetch(network: Routes, input: string | URL | Request, init: RequestInit = {}, opts?: ConnectOptions): Promise<Response> {
  const request = typeof input === 'object' && 'url' in input && !(input instanceof URL) ? input : undefined;
  let url = new URL(request ? request.url : String(input));
  let method = (init.method ?? request?.method ?? 'GET').toUpperCase();
  let body = bodyOf(init.body ?? (request?.body ? Buffer.from(await request.arrayBuffer()) : undefined));
  const headers = headersOf(init, request);
  if (body !== undefined && init.body instanceof URLSearchParams && !headers['content-type']) headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
  const signal = init.signal ?? request?.signal ?? undefined;
  for (let hop = 0; ; hop++) {
    const response = await once(network, url, method, headers, body, signal, opts);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || !location || init.redirect === 'manual') return response;
    if (init.redirect === 'error') throw new TypeError('fetch failed', { cause: new Error(`${url.href} redirects (${response.status}) and redirect is "error"`) });
    if (hop >= MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error(`${url.href}: more than ${MAX_REDIRECTS} redirects`) });
    await response.body?.cancel();
    const next = new URL(location, url);
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      delete headers['content-type'];
      delete headers['content-length'];
    }
    if (next.origin !== url.origin) delete headers.authorization;
    url = next;
  }
}

function once(network: Routes, url: URL, method: string, headers: Record<string, string>, body: string | Buffer | undefined, signal: AbortSignal | undefined, opts?: ConnectOptions): Promise<Response> {
  return new Promise((resolve, reject) => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return reject(new TypeError(`fetch failed: unsupported URL scheme ${url.protocol}`));
    let options: http.RequestOptions;
    try {
      options = network.requestOptions(url, { ...headers }, opts);
    } catch (err) {
      return reject(err);
    }
    const forwarded = options.path === url.href;
    const client = url.protocol === 'https:' && !forwarded ? https : http;
    const req = client.request(url, { ...options, method, ...(signal ? { signal } : {}) }, (res) => {
      const refused = forwarded ? network.refusal(url, res.statusCode ?? 0, res.statusMessage ?? '') : undefined;
      if (refused) {
        res.resume();
        return reject(refused);
      }
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item);
        else if (value !== undefined) responseHeaders.set(name, value);
      }
      const status = res.statusCode ?? 500;
      const empty = NULL_BODY.has(status) || method === 'HEAD';
      if (empty) res.resume();
      const response = new Response(empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage, headers: responseHeaders });
      Object.defineProperty(response, 'url', { value: url.href });
      resolve(response);
    });
    // A long-lived response (an MCP server's idle event stream) must not keep a finished Keel running.
    if (opts?.unref) req.on('socket', (socket) => socket.unref());
    req.on('error', (err: Error & { code?: string }) => {
      if (signal?.aborted) return reject(signal.reason ?? err);
      // Keel's own one-line errors (a refused tunnel, a bad client certificate) go out as they are.
      if (err.name === 'KeelError') return reject(err);
      reject(new TypeError('fetch failed', { cause: err }));
    });
    req.end(body);
  });
}
