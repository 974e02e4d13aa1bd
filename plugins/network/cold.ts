/**
 * The network's connection code, loaded only when a proxy variable or a client certificate is set (index.ts): routes
 * for clients that open their own sockets (the Anthropic provider's HTTP client), request options for node:http
 * (the MCP bridge), and a `fetch` over node:http for fetch-based clients (the OpenAI SDK, `web_fetch`, `web_search`).
 */
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { loadIdentity, type ClientIdentity } from './client-cert.js';
import { ProxyTable, type ProxyChoice } from './proxy.js';
import { DIRECT, nodeFetch } from './fetch.js';
import type { ResolvedNetwork } from './settings.js';
import { ProxyTunnel, proxyRefusal, proxySocket } from './tunnel.js';

export interface ConnectOptions {
  /** Present the client certificate (the model API, MCP servers); never for pages fetched for the model. */
  identity?: boolean;
  /** ALPN protocols to offer the origin over TLS. */
  alpn?: string[];
  /** For `fetch`: its sockets do not keep the process alive (a response stream that may idle for ever). */
  unref?: boolean;
}

/** How to reach one URL: open a socket (TLS already started for https), and for plain http through a proxy, the request's absolute-URI target and proxy headers. */
export interface Route {
  /** Connections of the same origin and key may be reused for each other. */
  key: string;
  open(): net.Socket;
  target?: string;
  headers?: Record<string, string>;
}

export interface Network {
  /** The proxy for a URL, or why none ('none': no variable for its scheme; 'no_proxy': an entry of NO_PROXY). */
  choose(url: URL): ProxyChoice;
  /**
   * A raw CONNECT tunnel to `host:port` through the `https:` proxy (the sandbox's proxy relays its commands' TLS in it),
   * or undefined when that host connects directly (no proxy, or NO_PROXY names it). It emits `established` once the
   * proxy has said yes; a refusal is its error, in the network's one line.
   */
  tunnel(host: string, port: number): Duplex | undefined;
  /** How to connect to `url`, or undefined to connect directly as usual (no proxy, and no client certificate to present). */
  route(url: URL, opts?: ConnectOptions): Route | undefined;
  /** node:http(s) request options (agent, proxy target, headers) for `url`, merged with the request's own headers. */
  requestOptions(url: URL, headers: Record<string, string>, opts?: ConnectOptions): http.RequestOptions;
  /** A fetch over node:http that goes through the proxy (and presents the client certificate when `identity`). */
  fetch(input: string | URL | Request, init?: RequestInit, opts?: ConnectOptions): Promise<Response>;
  /**
   * For a plain-http request the proxy forwarded, its answer as the network's one-line refusal when the proxy itself
   * refused (407: it wants credentials); undefined otherwise.
   */
  refusal(url: URL, status: number, reason: string): Error | undefined;
  /** One line for `keel doctor`: the proxy in force for `url`, "none", or "bypassed by NO_PROXY". */
  describe(url: URL): string;
}

const hostOf = (url: URL) => (url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname);
const portOf = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80));
const authority = (host: string, port: number) => `${net.isIP(host) === 6 ? `[${host}]` : host}:${port}`;

/** A TLS socket that exists at once; for a tunnel, the proxy's socket carries the process reference. */
function tlsOver(tunnel: ProxyTunnel | undefined, host: string, port: number, identity: ClientIdentity | undefined, alpn: string[] | undefined): tls.TLSSocket {
  const socket = tls.connect({
    ...(tunnel ? { socket: tunnel } : { port }),
    host,
    servername: net.isIP(host) ? undefined : host,
    ...(alpn ? { ALPNProtocols: alpn } : {}),
    ...(identity ? { cert: identity.cert, key: identity.key, ...(identity.passphrase !== undefined ? { passphrase: identity.passphrase } : {}) } : {}),
  });
  if (tunnel) {
    // The tunnel's refusal is the socket's error (the TLS layer would only say the stream closed); the owner of the
    // socket listens for it, and the no-op listener keeps a second report of the same failure from being unhandled.
    tunnel.on('error', (err) => socket.destroy(err));
    socket.on('error', () => undefined);
    socket.on('close', () => tunnel.destroy());
    socket.ref = () => (tunnel.ref(), socket);
    socket.unref = () => (tunnel.unref(), socket);
  }
  return socket;
}

export function createNetwork(settings: ResolvedNetwork): Network {
  const table = new ProxyTable(settings);
  let identity: ClientIdentity | undefined | null = null;
  const identityFor = (opts: ConnectOptions | undefined) => {
    if (!opts?.identity) return undefined;
    if (identity === null) identity = loadIdentity(settings);
    return identity;
  };
  const agents = new Map<string, http.Agent>();

  const network: Network = {
    choose: (url) => table.choose(url),
    tunnel(host, port) {
      const target = authority(host, port);
      const choice = table.choose(new URL(`https://${target}`));
      return choice.proxy ? new ProxyTunnel(choice.proxy, target, settings.proxyTimeoutMs) : undefined;
    },
    route(url, opts) {
      const choice = table.choose(url);
      const id = url.protocol === 'https:' ? identityFor(opts) : undefined;
      const host = hostOf(url);
      const port = portOf(url);
      if (!choice.proxy) {
        if (!id) return undefined;
        return { key: 'client-cert', open: () => tlsOver(undefined, host, port, id, opts?.alpn) };
      }
      const { proxy } = choice;
      if (url.protocol === 'https:') {
        return { key: `${proxy.shown}${id ? ' client-cert' : ''}`, open: () => tlsOver(new ProxyTunnel(proxy, authority(host, port), settings.proxyTimeoutMs), host, port, id, opts?.alpn) };
      }
      return {
        key: proxy.shown,
        open: () => proxySocket(proxy),
        target: url.href,
        // One request per connection: some proxies (tinyproxy) relay whatever follows a forwarded request raw.
        headers: { connection: 'close', ...(proxy.authorization ? { 'proxy-authorization': proxy.authorization } : {}) },
      };
    },
    requestOptions(url, headers, opts) {
      const route = network.route(url, opts);
      if (!route) return { headers };
      const agentKey = `${url.protocol}//${url.host} ${route.key}`;
      let agent = agents.get(agentKey);
      if (!agent) {
        const Base = url.protocol === 'https:' && !route.target ? https.Agent : http.Agent;
        agent = new (class extends Base {
          override createConnection(): net.Socket {
            return route.open();
          }
        })({ keepAlive: !route.target });
        agents.set(agentKey, agent);
      }
      if (!route.target) return { agent, headers };
      const choice = table.choose(url);
      return {
        agent,
        protocol: 'http:',
        host: choice.proxy!.host,
        port: choice.proxy!.port,
        path: route.target,
        headers: { ...headers, host: url.host, ...route.headers },
      };
    },
    fetch: (input, init, opts) => nodeFetch(network, input, init, opts),
    refusal(url, status, reason) {
      const choice = table.choose(url);
      return url.protocol === 'http:' && choice.proxy && status === 407 ? proxyRefusal(choice.proxy, status, reason, url.host) : undefined;
    },
    describe(url) {
      const choice = table.choose(url);
      if (choice.proxy) return `${url.origin}: through proxy ${choice.proxy.shown} (${choice.proxy.source})${url.protocol === 'https:' ? ', a CONNECT tunnel' : ''}`;
      if (choice.why === 'no_proxy') return `${url.origin}: bypassed by NO_PROXY (${choice.entry}), connects directly`;
      return `${url.origin}: none (no ${url.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY'} set), connects directly`;
    },
  };
  return network;
}

/** The same fetch with no proxy and no client certificate, for when the network has nothing configured. */
export function directFetch(input: string | URL | Request, init?: RequestInit, opts?: ConnectOptions): Promise<Response> {
  return nodeFetch(DIRECT, input, init, opts);
}

interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  required?: boolean;
}

/** `keel doctor`'s network lines: the proxy for the API's host, the client certificate, NODE_EXTRA_CA_CERTS. */
export function doctorChecks(settings: ResolvedNetwork, apiUrl: string): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  let url: URL | undefined;
  try {
    url = new URL(apiUrl);
  } catch {
    checks.push({ name: 'proxy', ok: false, detail: `the API URL ${apiUrl} is not a URL` });
  }
  if (url) {
    try {
      checks.push({ name: 'proxy', ok: true, detail: settings.configured ? createNetwork(settings).describe(url) : `${url.origin}: none (no proxy variable set)` });
    } catch (err) {
      checks.push({ name: 'proxy', ok: false, required: true, detail: (err as Error).message });
    }
  }
  // Tools such as curl read ALL_PROXY; Keel does not (SOCKS is not supported): say so rather than connect directly unseen.
  // Its value is not shown: it may hold a password.
  const allProxy = ['all_proxy', 'ALL_PROXY'].find((name) => process.env[name]?.trim());
  if (allProxy && !settings.httpsProxy && !settings.httpProxy) {
    checks.push({ name: 'ALL_PROXY', ok: false, detail: `${allProxy} is set, but Keel reads only HTTPS_PROXY and HTTP_PROXY, so it connects directly: set HTTPS_PROXY (and HTTP_PROXY) to your http:// proxy` });
  }
  if (settings.clientCert || settings.clientKey) {
    try {
      const id = loadIdentity(settings)!;
      checks.push({ name: 'client certificate', ok: true, detail: `presented to the model API and MCP servers: ${id.shown}` });
    } catch (err) {
      checks.push({ name: 'client certificate', ok: false, required: true, detail: (err as Error).message });
    }
  }
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (extra) {
    try {
      if (!statSync(extra).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'not a regular file' });
      const pem = readFileSync(extra, 'latin1');
      const count = pem.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;
      checks.push({ name: 'extra CA certificates', ok: count > 0, detail: count ? `NODE_EXTRA_CA_CERTS: ${count} certificate${count === 1 ? '' : 's'} from ${extra}` : `NODE_EXTRA_CA_CERTS: ${extra} holds no PEM certificate` });
    } catch (err) {
      checks.push({ name: 'extra CA certificates', ok: false, detail: `NODE_EXTRA_CA_CERTS: cannot read ${extra} (${(err as { code?: string }).code ?? (err as Error).message})` });
    }
  }
  return checks;
}
