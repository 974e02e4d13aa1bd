/**
 * `fetch` for the remote transports, over node:http(s) with unreferenced sockets: a server's idle event
 * stream (the GET that streamable HTTP and SSE keep open) must not keep a finished Keel running. While Keel
 * waits on a server, the connection's own bookkeeping keeps the process alive.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';

const NULL_BODY = new Set([101, 204, 205, 304]);

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new Error(`unsupported request body (${Object.prototype.toString.call(body)})`);
}

/** What the bridge needs of the `network` service: node:http request options for a URL (agent, proxy target, headers). */
export interface NetworkOptions {
  requestOptions(url: URL, headers: Record<string, string>, opts?: { identity?: boolean }): http.RequestOptions;
  /** The proxy's own refusal of a forwarded request (407), as one line naming it. */
  refusal(url: URL, status: number, reason: string): Error | undefined;
}

export function unrefFetch(input: string | URL, init: RequestInit = {}, network?: NetworkOptions): Promise<Response> {
  return new Promise((resolve, reject) => {
    const url = new URL(input);
    const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
    if (!client) return reject(new Error(`unsupported URL scheme ${url.protocol}`));
    let body: string | Buffer | undefined;
    try {
      body = bodyOf(init.body);
    } catch (err) {
      return reject(err);
    }
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    if (body !== undefined && init.body instanceof URLSearchParams && !headers['content-type']) headers['content-type'] = 'application/x-www-form-urlencoded';
    let options: http.RequestOptions = { headers };
    try {
      if (network) options = network.requestOptions(url, headers, { identity: true });
    } catch (err) {
      return reject(err);
    }
    // Plain http through a proxy goes to the proxy with the URL as the target (node:http, not https, speaks to it).
    const via = options.path === url.href ? http : client;
    const request = via.request(url, { ...options, method: init.method ?? 'GET', signal: init.signal ?? undefined }, (response) => {
      const refused = options.path === url.href ? network?.refusal(url, response.statusCode ?? 0, response.statusMessage ?? '') : undefined;
      if (refused) {
        response.resume();
        return reject(refused);
      }
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item);
        else if (value !== undefined) responseHeaders.set(name, value);
      }
      const status = response.statusCode ?? 500;
      const empty = NULL_BODY.has(status) || init.method === 'HEAD';
      if (empty) response.resume();
      resolve(
        new Response(empty ? null : (Readable.toWeb(response) as unknown as ReadableStream<Uint8Array>), {
          status,
          statusText: response.statusMessage,
          headers: responseHeaders,
        }),
      );
    });
    request.on('socket', (socket) => socket.unref());
    request.on('error', reject);
    request.end(body);
  });
}
