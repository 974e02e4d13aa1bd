/**
 * The fetch the cloud providers' clients are built with. Without a `network` service it is Keel's transport
 * (transport.ts). With one, each request goes the way that service says, looked up when the request is sent (a
 * network plugin may be applied after this one): through its `fetch`, else over the `http.Agent` its `agentFor(url)`
 * gives (a proxy tunnel, a client certificate), else through the transport. Either way the attempt's abort signal,
 * its watchdog feed and the pre-built body parts (see body.ts and transport.ts) still apply.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { PREBUILT, splicePrebuilt, type PrebuiltPart } from './body.js';
import { ALIVE, ATTEMPT_SIGNAL, nodeFetch } from './transport.js';

/** What a plugin that routes connections (proxies, client certificates) offers; every member is optional. */
export interface NetworkService {
  fetch?: typeof fetch;
  agentFor?(url: string): http.Agent | undefined;
}

type Init = RequestInit & { [ALIVE]?: (chunk?: Uint8Array) => void; [PREBUILT]?: PrebuiltPart[]; [ATTEMPT_SIGNAL]?: AbortSignal };

export function networkFetch(network: () => NetworkService | undefined): typeof fetch {
  return (input, init: Init = {}) => {
    const net = network();
    if (!net?.fetch && !net?.agentFor) return nodeFetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const agent = net.fetch ? undefined : net.agentFor?.(url);
    if (!net.fetch && !agent) return nodeFetch(input, init);
    const plain = plainInit(init);
    const alive = init[ALIVE] ?? (() => undefined);
    const sent = net.fetch ? net.fetch(url, plain) : agentFetch(url, plain, agent!);
    return sent.then((response) => watched(response, alive));
  };
}

/** The request as any fetch takes it: one signal for the caller's and the attempt's, the pre-built parts spliced in. */
function plainInit(init: Init): RequestInit {
  const signals = [init.signal, init[ATTEMPT_SIGNAL]].filter((s): s is AbortSignal => !!s);
  const prebuilt = init[PREBUILT];
  const body = prebuilt && typeof init.body === 'string' ? Buffer.concat(splicePrebuilt(init.body, prebuilt)) : init.body;
  return {
    method: init.method,
    headers: init.headers,
    body,
    ...(signals.length ? { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) } : {}),
  };
}

/** The response with `alive` called on its headers and on every chunk, as the transport does. */
function watched(response: Response, alive: (chunk?: Uint8Array) => void): Response {
  alive();
  if (!response.body) return response;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        alive(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** One request over node:http(s) with the given agent, answered as a fetch `Response`. */
function agentFetch(url: string, init: RequestInit, agent: http.Agent): Promise<Response> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    const body = init.body === undefined || init.body === null ? undefined : Buffer.from(init.body as string | Uint8Array);
    if (body) headers['content-length'] = String(body.length);
    const send = target.protocol === 'https:' ? https.request : http.request;
    const req = send(target, { method: init.method ?? 'GET', headers, agent, signal: init.signal ?? undefined }, (res) => {
      const responseHeaders = new Headers();
      for (let i = 0; i < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
      const noBody = res.statusCode === 204 || res.statusCode === 304;
      resolve(new Response(noBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: responseHeaders }));
    });
    req.on('error', (err) => reject(err.name === 'AbortError' ? err : new TypeError(`fetch failed: ${err.message}`, { cause: err })));
    req.end(body);
  });
}
