/**
 * A CONNECT tunnel through a proxy as a stream that exists at once: writes wait until the proxy has answered 200, so a
 * TLS client (tls.connect over it) can be handed the stream synchronously, as a plain socket would be. A refusal
 * destroys it with one line naming the proxy (never its password) and what it said.
 */
import { Duplex } from 'node:stream';
import net from 'node:net';
import tls from 'node:tls';
import { KeelError } from '../../kernel/index.js';
import type { Proxy } from './proxy.js';

const MAX_HEAD = 64 * 1024;
/** How long a proxy may take to answer CONNECT when `network.proxyTimeoutMs` does not say: under the API's first-byte watchdog (30 s), so a stalled proxy is named. */
export const PROXY_TIMEOUT_MS = 20_000;

/** The proxy's answer, as the one line users see; `code` lets the retry policy tell a refusal from a lost connection. */
export function proxyRefusal(proxy: Proxy, status: number, reason: string, target: string): KeelError {
  // 407 is the standard answer; some proxies (tinyproxy) answer 401 to credentials they refuse.
  if (status === 407 || status === 401) {
    const fix = proxy.authorization
      ? `it refused the user and password in ${proxy.source}`
      : `put the user and password in ${proxy.source} (http://user:password@host:port)`;
    return new KeelError(`proxy ${proxy.shown} requires authentication (${status}): ${fix}`, { code: 'ERR_PROXY_AUTH' });
  }
  return new KeelError(`proxy ${proxy.shown} (from ${proxy.source}) refused the tunnel to ${target} (${status}${reason ? ` ${reason}` : ''})`, { code: 'ERR_PROXY_REFUSED' });
}

/** A connection to the proxy that failed (refused, unreachable, reset): keeps the system code so it is retried. */
export function proxyUnreachable(proxy: Proxy, err: Error & { code?: string; said?: boolean }): Error {
  return Object.assign(new Error(`cannot reach proxy ${proxy.shown} (from ${proxy.source}): ${err.said ? err.message : (err.code ?? err.message)}`, { cause: err }), {
    code: err.code ?? 'ECONNRESET',
    network: true,
  });
}

/** An error of Keel's own wording about the proxy, with the system code the retry policy reads. */
function said(message: string, code: string): Error & { code: string; said: true } {
  return Object.assign(new Error(message), { code, said: true as const });
}

/** A socket to the proxy itself: TLS for an `https://` proxy. */
export function proxySocket(proxy: Proxy): net.Socket {
  if (proxy.url.protocol === 'https:') return tls.connect({ host: proxy.host, port: proxy.port, servername: net.isIP(proxy.host) ? undefined : proxy.host, ALPNProtocols: ['http/1.1'] });
  return net.connect({ host: proxy.host, port: proxy.port, noDelay: true });
}

export class ProxyTunnel extends Duplex {
  private readonly raw: net.Socket;
  private open = false;
  private head: Buffer = Buffer.alloc(0);
  private readonly waiting: Array<() => void> = [];

  /** `target` is `host:port` (an IPv6 host in brackets). */
  private readonly answerTimer: NodeJS.Timeout;

  constructor(
    private readonly proxy: Proxy,
    private readonly target: string,
    timeoutMs = PROXY_TIMEOUT_MS,
  ) {
    super();
    // A proxy that accepts and then says nothing (or too little) must not hold the connection for ever.
    this.answerTimer = setTimeout(() => {
      if (!this.open && !this.destroyed) this.destroy(proxyUnreachable(proxy, said(`no answer to CONNECT ${target} within ${timeoutMs / 1000} s`, 'ETIMEDOUT')));
    }, timeoutMs);
    this.answerTimer.unref();
    const raw = proxySocket(proxy);
    this.raw = raw;
    raw.setNoDelay(true);
    let request = `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n`;
    if (proxy.authorization) request += `Proxy-Authorization: ${proxy.authorization}\r\n`;
    raw.write(`${request}\r\n`, 'latin1');
    raw.on('data', this.onHead);
    raw.on('error', (err: Error & { code?: string }) => this.destroy(this.open ? err : proxyUnreachable(proxy, err)));
    raw.on('end', () => {
      if (this.open) this.push(null);
      else this.destroy(proxyUnreachable(proxy, said(`it closed the connection before answering CONNECT ${target}`, 'ECONNRESET')));
    });
    raw.on('close', () => {
      if (!this.destroyed && !this.open) this.destroy(proxyUnreachable(proxy, said(`it closed the connection before answering CONNECT ${target}`, 'ECONNRESET')));
      else if (!this.destroyed) this.push(null);
    });
  }

  private readonly onHead = (data: Buffer) => {
    this.head = this.head.length ? Buffer.concat([this.head, data]) : data;
    const end = this.head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (this.head.length > MAX_HEAD) this.destroy(proxyRefusal(this.proxy, 502, 'an answer larger than 64 KB', this.target));
      return;
    }
    const status = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(this.head.toString('latin1', 0, this.head.indexOf('\r\n')));
    const rest = this.head.subarray(end + 4);
    this.head = Buffer.alloc(0);
    this.raw.off('data', this.onHead);
    if (!status) return void this.destroy(proxyRefusal(this.proxy, 502, 'an answer that is not HTTP', this.target));
    const code = Number(status[1]);
    if (code < 200 || code > 299) return void this.destroy(proxyRefusal(this.proxy, code, status[2]!.trim(), this.target));
    this.open = true;
    clearTimeout(this.answerTimer);
    this.emit('established');
    this.raw.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) this.raw.pause();
    });
    if (rest.length) this.push(rest);
    for (const go of this.waiting.splice(0)) go();
  };

  override _read(): void {
    if (this.open) this.raw.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    if (this.open) this.raw.write(chunk, encoding, callback);
    else this.waiting.push(() => this.raw.write(chunk, encoding, callback));
  }

  override _final(callback: (err?: Error | null) => void): void {
    if (this.open) this.raw.end(callback);
    else this.waiting.push(() => this.raw.end(callback));
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    clearTimeout(this.answerTimer);
    this.raw.destroy();
    this.waiting.length = 0;
    callback(err);
  }

  /** Idle pooled connections must not keep the process alive: the reference is the proxy socket's. */
  ref(): this {
    this.raw.ref();
    return this;
  }

  unref(): this {
    this.raw.unref();
    return this;
  }
}
