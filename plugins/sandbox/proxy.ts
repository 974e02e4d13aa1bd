/**
 * The sandbox's only way out: an HTTP proxy on a unix socket outside the sandbox that lets through requests
 * (plain HTTP and CONNECT tunnels) to allowed domains only. Inside, a small bridge listens on the sandbox's own
 * loopback and forwards to the socket; HTTP(S)_PROXY point at the bridge.
 */
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * The proxy the user's network goes through (the `network` service's, when HTTPS_PROXY / HTTP_PROXY are set): what the
 * sandbox lets through goes on through it, so allowed domains are reachable behind a corporate proxy too.
 */
export interface Upstream {
  /** A CONNECT tunnel through the user's proxy, or undefined to connect directly; emits `established`. */
  tunnel(host: string, port: number): Duplex | undefined;
  /** Request options that forward a plain-http request through the user's proxy (or none: directly). */
  requestOptions(url: URL, headers: Record<string, string>): http.RequestOptions;
}

export function domainAllowed(host: string, allowed: string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return allowed.some((entry) => {
    const d = entry.toLowerCase().trim();
    if (d.startsWith('*.')) return h.endsWith(d.slice(1));
    return h === d || h.endsWith(`.${d}`);
  });
}

const refusal = (host: string) => `blocked by the Keel sandbox: ${host} is not in sandbox.network.allowedDomains\n`;

/** Starts the filtering proxy on `socketPath`. The server does not keep the process alive. */
export async function startProxy(socketPath: string, allowed: string[], upstreamProxy?: Upstream): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('the Keel sandbox proxy needs an absolute URL\n');
      return;
    }
    if (target.protocol !== 'http:') {
      res.writeHead(400).end(`unsupported scheme ${target.protocol}\n`);
      return;
    }
    if (!domainAllowed(target.hostname, allowed)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(refusal(target.hostname));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    let options: http.RequestOptions;
    try {
      options = upstreamProxy ? upstreamProxy.requestOptions(target, headers) : { headers };
    } catch (err) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`the Keel sandbox proxy could not reach ${target.host}: ${(err as Error).message}\n`);
      return;
    }
    const upstream = http.request(
      target,
      { ...options, method: req.method },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`the Keel sandbox proxy could not reach ${target.host}: ${err.message}\n`);
    });
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const [host, portText] = splitHostPort(req.url ?? '');
    socket.on('error', () => undefined);
    if (!host || !domainAllowed(host, allowed)) {
      socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${refusal(host || '(none)')}`);
      return;
    }
    const port = Number(portText) || 443;
    let upstream: Duplex;
    try {
      upstream = upstreamProxy?.tunnel(host, port) ?? net.connect(port, host);
    } catch (err) {
      socket.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\n${(err as Error).message}\n`);
      return;
    }
    let answered = false;
    upstream.once(upstream instanceof net.Socket ? 'connect' : 'established', () => {
      answered = true;
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    // The user's proxy's refusal is one line naming it (never its password): the command's client shows it.
    upstream.on('error', (err) => (answered ? socket.destroy() : socket.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\n${err.message}\n`)));
    socket.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  server.unref();
  return server;
}

function splitHostPort(authority: string): [string, string] {
  const bracket = /^\[([^\]]+)\]:(\d+)$/.exec(authority);
  if (bracket) return [bracket[1], bracket[2]];
  const at = authority.lastIndexOf(':');
  return at === -1 ? [authority, '443'] : [authority.slice(0, at), authority.slice(at + 1)];
}

/** The port the bridge listens on inside the sandbox's private network namespace. */
export const BRIDGE_PORT = 3128;

/**
 * Runs inside the sandbox as `node -e BRIDGE <socket> <port> <command…>`: forwards the loopback port to the
 * proxy socket, runs the command with the same stdio (fd 3 included, the bash tool reads it), exits as it does.
 */
export const BRIDGE = `
const net = require('node:net');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const [sock, port, file, ...args] = process.argv.slice(1);
const server = net.createServer((client) => {
  const upstream = net.connect(sock);
  client.pipe(upstream); upstream.pipe(client);
  client.on('error', () => upstream.destroy()); upstream.on('error', () => client.destroy());
});
server.listen(Number(port), '127.0.0.1', () => {
  let fd3 = 'ignore';
  try { fs.fstatSync(3); fd3 = 3; } catch {}
  const child = spawn(file, args, { stdio: [0, 1, 2, fd3] });
  const relay = (sig) => { try { child.kill(sig); } catch {} };
  process.on('SIGTERM', relay); process.on('SIGINT', relay);
  child.on('exit', (code, signal) => { if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); } else process.exit(code ?? 1); });
  child.on('error', (err) => { process.stderr.write('sandbox: ' + err.message + '\\n'); process.exit(127); });
});
`;
