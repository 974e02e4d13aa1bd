/**
 * The HTTP/1.1 client under the provider's `fetch` (transport.ts): one request at a time per connection, idle
 * connections kept per origin for the next request, TLS through node:tls for `https:` (certificates verified as
 * Node does, NODE_EXTRA_CA_CERTS included). node:http would cost every run about 3 ms to load, compile and set up
 * a request (its parser cannot be held by the start-up snapshot); what a Messages API exchange needs of HTTP is
 * small: a request head and body written at once, a response head, and a body framed by chunked encoding, a
 * length, or the end of the connection.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';

export interface RequestOptions {
  method: string;
  headers: Record<string, string>;
  /** How to connect when not directly (a proxy, a client certificate): given by the `network` service. */
  route?: Route;
}

/** A connection made by the `network` service; for plain http through a proxy, the absolute-URI target and its headers. */
export interface Route {
  key: string;
  open(): net.Socket;
  target?: string;
  headers?: Record<string, string>;
}

/** What the transport reads of a response: status, headers, and the body's bytes as `data` events. */
export interface Response extends EventEmitter {
  statusCode: number;
  statusMessage: string;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Names and values as received, alternating. */
  rawHeaders: string[];
  /** True once the whole body arrived (`end` follows); a `close` without it means the body was cut. */
  complete: boolean;
  destroy(): void;
  /**
   * The reader needs no more of the body: the connection is kept for the next request if the body ends within
   * `graceMs`, else dropped. It never keeps the process alive meanwhile.
   */
  settle(graceMs: number): void;
}

export interface Request extends EventEmitter {
  write(chunk: Uint8Array): boolean;
  /** Sends the head and every written chunk together. */
  end(): void;
  destroy(): void;
}

/** The largest response head accepted: more is not an HTTP server answering. */
const MAX_HEAD = 64 * 1024;
const idle = new Map<string, net.Socket[]>();
/** The listener that closes an idle connection, by connection (removed when the connection is taken again). */
const dropOf = new WeakMap<net.Socket, () => void>();

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value may hold no line break, NUL or character above U+00FF: nothing can end the head early. */
const UNSAFE_VALUE = /[\r\n\0\u0100-\uffff]/;

/**
 * Starts a request; `response` is emitted with the head, `error` if none arrives (`TypeError`s name the cause).
 * Throws at once on a method or header that would not be one (a line break in an API key, say).
 */
export function request(url: URL, options: RequestOptions): Request {
  const invalid = (message: string) => Object.assign(new TypeError(message), { code: 'ERR_INVALID_CHAR' });
  if (!TOKEN.test(options.method)) throw invalid(`invalid HTTP method ${JSON.stringify(options.method)}`);
  for (const [name, value] of Object.entries(options.headers)) {
    if (!TOKEN.test(name)) throw invalid(`invalid HTTP header name ${JSON.stringify(name)}`);
    if (UNSAFE_VALUE.test(value)) throw invalid(`the HTTP header "${name}" holds a line break or a character it cannot carry`);
  }
  const secure = url.protocol === 'https:';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || (secure ? 443 : 80));
  const route = options.route;
  const origin = `${url.protocol}//${host}:${port}${route ? ` via ${route.key}` : ''}`;
  const open = () => (route ? route.open() : connect(secure, host, port));
  const pooled = takeIdle(origin);
  let socket = pooled ?? open();
  // A kept-alive connection the server closed while it sat idle dies before any response byte: the request is
  // sent again at once on a new connection, once, outside any retry budget (the server had closed it unread).
  let mayResend = pooled !== undefined;
  const chunks: Uint8Array[] = [];
  let destroyed = false;
  let sent = false;
  const send = () => {
    let head = `${options.method} ${route?.target ?? `${url.pathname}${url.search}`} HTTP/1.1\r\nhost: ${url.host}\r\n`;
    for (const [name, value] of Object.entries({ ...options.headers, ...route?.headers })) head += `${name}: ${value}\r\n`;
    socket.cork();
    socket.write(`${head}\r\n`, 'latin1');
    for (const chunk of chunks) socket.write(chunk);
    socket.uncork();
  };
  const req = Object.assign(new EventEmitter(), {
    write(chunk: Uint8Array) {
      chunks.push(chunk);
      return true;
    },
    end() {
      sent = true;
      send();
    },
    destroy() {
      destroyed = true;
      socket.destroy();
    },
  }) as Request;
  let parser: ResponseParser;
  const attach = () => {
    parser = new ResponseParser(options.method === 'HEAD', socket, (res) => req.emit('response', res));
    parser.onDone = (reusable) => {
      detach();
      // A request forwarded by a proxy is not reused: some proxies (tinyproxy) relay whatever follows it raw.
      if (reusable && !destroyed && !route?.target) keepIdle(origin, socket);
      else socket.destroy();
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', onError);
    socket.on('close', onClose);
  };
  const onData = (data: Buffer) => {
    try {
      parser.push(data);
    } catch (err) {
      socket.destroy();
      fail(err);
    }
  };
  const onEnd = () => {
    try {
      parser.end();
    } catch (err) {
      fail(err);
    }
  };
  const onError = (err: Error) => fail(err);
  const onClose = () => fail(parser.cutShort());
  const fail = (err: unknown) => {
    detach();
    if (destroyed) return;
    if (mayResend && parser.received === 0) {
      mayResend = false;
      socket.destroy();
      socket = open();
      attach();
      if (sent) send();
      return;
    }
    if (parser.response) parser.abort(err);
    else req.emit('error', err);
  };
  const detach = () => {
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.off('error', onError);
    socket.off('close', onClose);
  };
  attach();
  return req;
}

function connect(secure: boolean, host: string, port: number): net.Socket {
  if (!secure) return net.connect({ host, port, noDelay: true });
  return tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] });
}

/** An idle connection to `origin` that is still open and quiet, taken out of the pool and referenced again. */
function takeIdle(origin: string): net.Socket | undefined {
  const pool = idle.get(origin);
  for (let socket = pool?.pop(); socket; socket = pool?.pop()) {
    const drop = dropOf.get(socket);
    if (drop) socket.off('data', drop).off('end', drop).off('close', drop).off('error', drop);
    if (!socket.destroyed && socket.readyState === 'open') {
      socket.ref();
      return socket;
    }
    socket.destroy();
  }
  return undefined;
}

/** Keeps a connection for the next request; it never keeps the process alive, and anything it hears closes it. */
function keepIdle(origin: string, socket: net.Socket): void {
  const drop = () => {
    socket.destroy();
    const pool = idle.get(origin);
    if (pool) idle.set(origin, pool.filter((s) => s !== socket));
  };
  dropOf.set(socket, drop);
  socket.on('data', drop).on('end', drop).on('close', drop).on('error', drop);
  socket.unref();
  const pool = idle.get(origin) ?? [];
  pool.push(socket);
  idle.set(origin, pool);
}

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;

/**
 * Reads one response from a connection's bytes: the head (skipping 1xx heads), then the body as its framing says.
 * `onDone(reusable)` runs once the body has ended; throws on what is not HTTP/1.1.
 */
class ResponseParser {
  response: (Response & EventEmitter) | undefined;
  onDone: (reusable: boolean) => void = () => undefined;
  private head: Buffer = Buffer.alloc(0);
  /** Body framing: bytes left of a fixed length, of the current chunk, or -1 until the connection ends. */
  private mode: 'length' | 'chunked' | 'close' | 'none' = 'none';
  private left = 0;
  /** Chunked: the bytes of a size line or a CRLF not yet complete. */
  private pending: Buffer = Buffer.alloc(0);
  private chunkState: 'size' | 'data' | 'crlf' | 'trailers' = 'size';
  private keepAlive = true;
  private done = false;
  /** Every byte received on the connection for this response, head included. */
  received = 0;
  /** Body bytes received, as framed (chunk sizes and CRLFs not counted). */
  private bodyBytes = 0;
  private length = 0;

  constructor(
    private readonly headRequest: boolean,
    private readonly socket: net.Socket,
    private readonly onResponse: (res: Response) => void,
  ) {}

  push(data: Buffer): void {
    if (this.done) throw new TypeError('the server sent more than its response');
    this.received += data.length;
    if (!this.response) {
      this.head = this.head.length ? Buffer.concat([this.head, data]) : data;
      const end = this.head.indexOf('\r\n\r\n');
      if (end > MAX_HEAD || (end < 0 && this.head.length > MAX_HEAD)) {
        throw new TypeError(`the response head exceeds ${MAX_HEAD / 1024} KB (${end < 0 ? `${this.head.length} bytes without its end` : `${end} bytes`})`);
      }
      if (end < 0) {
        if (this.head.indexOf('\n\n') >= 0) throw new TypeError('malformed response head: its lines end in a bare LF instead of CRLF');
        return;
      }
      const rest = this.head.subarray(end + 4);
      const informational = this.start(this.head.toString('latin1', 0, end));
      this.head = Buffer.alloc(0);
      if (informational) return rest.length ? this.push(rest) : undefined;
      if (rest.length) this.body(rest);
      else if (this.mode === 'none' || (this.mode === 'length' && this.left === 0)) this.finish();
      return;
    }
    this.body(data);
  }

  /** The connection ended (the server closed its side). */
  end(): void {
    if (this.done) return;
    if (this.response && this.mode === 'close') {
      this.keepAlive = false;
      this.finish();
      return;
    }
    throw this.cutShort();
  }

  /** What was missing when the connection ended early, as the error to report. */
  cutShort(): Error {
    if (!this.response) {
      return new Error(this.head.length ? `the connection closed inside the response head (after ${this.head.length} bytes)` : 'the connection closed before any response byte');
    }
    if (this.mode === 'length') return new Error(`the response body ended after ${this.bodyBytes} of ${this.length} bytes (content-length)`);
    if (this.mode === 'chunked') return new Error(`the response body ended before its last chunk (chunked encoding, ${this.bodyBytes} bytes received)`);
    return new Error('the connection closed before the response ended');
  }

  abort(err: unknown): void {
    if (this.done) return;
    this.done = true;
    const res = this.response!;
    if (res.listenerCount('error')) res.emit('error', err);
    res.emit('close');
  }

  /** Parses a head; true for a 1xx one, after which the real head follows. */
  private start(text: string): boolean {
    if (/[^\r]\n|^\n/.test(text)) throw new TypeError('malformed response head: a line ends in a bare LF instead of CRLF');
    const lines = text.split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (!status) throw new TypeError(`not an HTTP/1.1 response: ${JSON.stringify(lines[0]!.slice(0, 80))}`);
    const code = Number(status[2]);
    if (code >= 100 && code < 200) {
      if (code === 101) throw new TypeError('the server switched protocols (101), which a request here never asks for');
      return true;
    }
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    const rawHeaders: string[] = [];
    for (const line of lines.slice(1)) {
      if (/^[ \t]/.test(line) && rawHeaders.length) {
        // obsolete line folding: the line continues the previous header's value
        rawHeaders[rawHeaders.length - 1] += ` ${line.trim()}`;
        const last = rawHeaders[rawHeaders.length - 2]!.toLowerCase();
        headers[last] += ` ${line.trim()}`;
        continue;
      }
      const colon = line.indexOf(':');
      if (colon <= 0) throw new TypeError(`not an HTTP header line: ${JSON.stringify(line.slice(0, 80))}`);
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      rawHeaders.push(name, value);
      const key = name.toLowerCase();
      headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
    }
    const connection = (headers.connection ?? '').toLowerCase();
    this.keepAlive = status[1] === '1' ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
    const coding = (headers['transfer-encoding'] ?? '').toLowerCase();
    if (this.headRequest || code === 204 || code === 304) this.mode = 'none';
    else if (coding) {
      if (!/(^|,)\s*chunked\s*$/.test(coding)) throw new TypeError(`unsupported transfer-encoding "${coding}"`);
      this.mode = 'chunked';
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (!/^\d+$/.test(headers['content-length']) || !Number.isSafeInteger(length)) throw new TypeError(`invalid content-length "${headers['content-length']}"`);
      this.mode = 'length';
      this.left = length;
      this.length = length;
    } else {
      this.mode = 'close';
      this.keepAlive = false;
    }
    const socket = this.socket;
    this.response = Object.assign(new EventEmitter(), {
      statusCode: code,
      statusMessage: status[3] ?? '',
      headers,
      rawHeaders,
      complete: false,
      destroy: () => socket.destroy(),
      settle: (graceMs: number) => {
        if (this.done) return;
        socket.unref();
        const timer = setTimeout(() => socket.destroy(), graceMs);
        timer.unref();
        const finish = this.onDone;
        this.onDone = (reusable) => {
          clearTimeout(timer);
          finish(reusable);
        };
      },
    });
    this.onResponse(this.response);
    return false;
  }

  private body(data: Buffer): void {
    if (this.mode === 'close') return void this.emit(data);
    if (this.mode === 'length') {
      if (data.length > this.left) throw new TypeError('the server sent more than its content-length');
      this.left -= data.length;
      this.emit(data);
      if (this.left === 0) this.finish();
      return;
    }
    if (this.mode === 'chunked') return this.chunks(data);
    if (data.length) throw new TypeError('the server sent a body where none belongs');
  }

  private chunks(data: Buffer): void {
    let at = 0;
    while (at < data.length && !this.done) {
      if (this.chunkState === 'data') {
        const take = Math.min(this.left, data.length - at);
        this.emit(data.subarray(at, at + take));
        at += take;
        this.left -= take;
        if (this.left === 0) this.chunkState = 'crlf';
        continue;
      }
      const nl = data.indexOf('\n', at);
      if (nl < 0) {
        this.pending = Buffer.concat([this.pending, data.subarray(at)]);
        if (this.pending.length > MAX_HEAD) throw new TypeError('a chunk size line is larger than 64 KB');
        return;
      }
      const line = Buffer.concat([this.pending, data.subarray(at, nl)]).toString('latin1').replace(/\r$/, '');
      this.pending = Buffer.alloc(0);
      at = nl + 1;
      if (this.chunkState === 'crlf') {
        if (line !== '') throw new TypeError('a chunk did not end with CRLF');
        this.chunkState = 'size';
      } else if (this.chunkState === 'size') {
        const size = /^([0-9a-fA-F]+)\s*(;.*)?$/.exec(line);
        if (!size) throw new TypeError(`invalid chunk size line ${JSON.stringify(line.slice(0, 40))}`);
        this.left = parseInt(size[1]!, 16);
        this.chunkState = this.left === 0 ? 'trailers' : 'data';
      } else if (line === '') {
        this.finish();
        if (at < data.length) throw new TypeError('the server sent more than its response');
      }
    }
  }

  private emit(data: Buffer): void {
    this.bodyBytes += data.length;
    if (data.length) this.response!.emit('data', data);
  }

  private finish(): void {
    this.done = true;
    const res = this.response!;
    res.complete = true;
    this.onDone(this.keepAlive);
    res.emit('end');
    res.emit('close');
  }
}
