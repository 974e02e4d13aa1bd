/**
 * Keel's HTTP/1.1 client (plugins/query-anthropic/http-client.ts) against raw servers on 127.0.0.1 that answer
 * byte by byte as a test scripts them: framing, reuse of connections, and everything that is not HTTP.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { request, type Response } from '../../../plugins/query-anthropic/http-client.js';
import { until } from '../../helpers/until.js';

interface RawServer {
  url: string;
  connections: number;
  /** Connections that have closed. */
  closed: number;
  /** The requests received, as text. */
  received: string[];
  close(): Promise<void>;
}

const servers: RawServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A server that answers each request (once its head and body arrived) with the bytes `answer` returns, in pieces. */
async function rawServer(answer: (n: number) => { pieces: Array<string | Buffer>; close?: boolean }, secure?: { key: string; cert: string }): Promise<RawServer> {
  const sockets = new Set<net.Socket>();
  const state: RawServer = { url: '', connections: 0, closed: 0, received: [], close: async () => undefined };
  const onSocket = (socket: net.Socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      state.closed++;
    });
    let text = '';
    socket.on('data', async (data) => {
      text += data.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      state.received.push(text.slice(0, end + 4 + length));
      text = text.slice(end + 4 + length);
      const { pieces, close } = answer(state.received.length);
      for (const piece of pieces) {
        socket.write(piece);
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (close) socket.end();
    });
  };
  const server = secure ? tls.createServer(secure, onSocket) : net.createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `${secure ? 'https' : 'http'}://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  servers.push(state);
  return state;
}

interface Result {
  res: Response;
  body: string;
  complete: boolean;
}

/** Sends a request and collects its whole answer; rejects with the request's error. */
function send(url: string, method = 'POST', body = '{"a":1}'): Promise<Result> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/v1/messages?beta=true', url), { method, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } });
    req.on('error', reject);
    req.on('response', (res: Response) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('close', () => resolve({ res, body: text, complete: res.complete }));
    });
    if (body) req.write(Buffer.from(body));
    req.end();
  });
}

const ok = (body: string, extra = '') => `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n${extra}transfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
const bytes = (text: string) => [...text].map((c) => c);

describe('the HTTP/1.1 client', () => {
  it('sends the head and body, reads a chunked body cut at every byte, and reuses the connection', async () => {
    const server = await rawServer((n) => ({ pieces: bytes(ok(`event: ping\ndata: {"n":${n}}\n\n`, 'x-extra: 1\r\n')) }));
    const first = await send(server.url);
    expect(first.res.statusCode).toBe(200);
    expect(first.res.headers['content-type']).toBe('text/event-stream');
    expect(first.body).toBe('event: ping\ndata: {"n":1}\n\n');
    expect(first.complete).toBe(true);
    expect(server.received[0]).toMatch(/^POST \/v1\/messages\?beta=true HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\ncontent-type: application\/json\r\ncontent-length: 7\r\n\r\n\{"a":1\}$/);
    const second = await send(server.url);
    expect(second.body).toBe('event: ping\ndata: {"n":2}\n\n');
    expect(server.connections).toBe(1);
  });

  it('reads a body by content-length or to the end of the connection, which is then not reused', async () => {
    const server = await rawServer((n) =>
      n !== 2 ? { pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhel', 'lo'] } : { pieces: ['HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil ', 'the end'], close: true },
    );
    expect((await send(server.url)).body).toBe('hello');
    const closed = await send(server.url);
    expect(closed).toMatchObject({ body: 'until the end', complete: true });
    expect((await send(server.url)).body).toBe('hello');
    expect(server.connections).toBe(2);
  });

  it('skips informational heads, joins repeated and folded headers, and gives HEAD and 204 no body', async () => {
    const server = await rawServer((n) =>
      n === 1
        ? { pieces: ['HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nx-many: a\r\nx-many: b\r\nx-folded: one\r\n  two\r\ncontent-length: 2\r\n\r\nok'] }
        : { pieces: [n === 2 ? 'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n' : 'HTTP/1.1 204 No Content\r\n\r\n'] },
    );
    const first = await send(server.url);
    expect(first.res.headers).toMatchObject({ 'x-many': 'a, b', 'x-folded': 'one two' });
    expect(first.body).toBe('ok');
    expect(await send(server.url, 'HEAD', '')).toMatchObject({ body: '', complete: true });
    expect(await send(server.url, 'GET', '')).toMatchObject({ body: '', complete: true });
  });

  it('fails a request the server does not answer in HTTP, and one it never reaches', async () => {
    const garbage = await rawServer(() => ({ pieces: ['SSH-2.0-OpenSSH\r\n\r\n'] }));
    await expect(send(garbage.url)).rejects.toThrow(/not an HTTP\/1\.1 response: "SSH-2\.0-OpenSSH"/);
    const huge = await rawServer(() => ({ pieces: [`HTTP/1.1 200 OK\r\nx: ${'y'.repeat(70_000)}`] }));
    await expect(send(huge.url)).rejects.toThrow(/^the response head exceeds 64 KB \(\d+ bytes without its end\)$/);
    const bareLf = await rawServer(() => ({ pieces: ['HTTP/1.1 200 OK\ncontent-length: 2\n\nok'] }));
    await expect(send(bareLf.url)).rejects.toThrow('malformed response head: its lines end in a bare LF instead of CRLF');
    const mixed = await rawServer(() => ({ pieces: ['HTTP/1.1 200 OK\r\nx-a: 1\ncontent-length: 2\r\n\r\nok'] }));
    await expect(send(mixed.url)).rejects.toThrow('malformed response head: a line ends in a bare LF instead of CRLF');
    const gone = await rawServer(() => ({ pieces: [], close: true }));
    await expect(send(gone.url)).rejects.toThrow('the connection closed before any response byte');
    const port = (gone.url.match(/:(\d+)$/) ?? [])[1];
    await gone.close();
    servers.splice(servers.indexOf(gone), 1);
    await expect(send(`http://127.0.0.1:${port}`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('ends a body cut mid-chunk as incomplete, and refuses a broken chunk', async () => {
    const cut = await rawServer(() => ({ pieces: ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n20\r\nonly part'], close: true }));
    expect(await send(cut.url)).toMatchObject({ body: 'only part', complete: false });
    const broken = await rawServer(() => ({ pieces: ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'] }));
    expect(await send(broken.url)).toMatchObject({ complete: false });
  });

  it('names what a cut body lacked: bytes of a content-length, the last chunk', async () => {
    const errorOf = (url: string) =>
      new Promise<string>((resolve, reject) => {
        const req = request(new URL('/v1/messages', url), { method: 'GET', headers: {} });
        req.on('error', reject);
        req.on('response', (res: Response) => {
          res.on('error', (err: Error) => resolve(err.message));
          res.on('close', () => resolve('closed without an error'));
        });
        req.end();
      });
    const short = await rawServer(() => ({ pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly 10 b.'], close: true }));
    expect(await errorOf(short.url)).toBe('the response body ended after 10 of 100 bytes (content-length)');
    const unchunked = await rawServer(() => ({ pieces: ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n'], close: true }));
    expect(await errorOf(unchunked.url)).toBe('the response body ended before its last chunk (chunked encoding, 2 bytes received)');
  });

  it('sends a request again at once, on a new connection, when a kept-alive one dies before any response byte', async () => {
    // The second request reaches a connection the server is closing: it reads the request and ends, unanswered.
    const server = await rawServer((n) => (n === 2 ? { pieces: [], close: true } : { pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'] }));
    expect((await send(server.url)).body).toBe('ok');
    expect((await send(server.url)).body).toBe('ok');
    expect(server.connections).toBe(2);
    expect(server.received).toHaveLength(3);
    // Only once: a new connection that dies the same way fails the request.
    const dying = await rawServer((n) => (n === 1 ? { pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'] } : { pieces: [], close: true }));
    expect((await send(dying.url)).body).toBe('ok');
    await expect(send(dying.url)).rejects.toThrow('the connection closed before any response byte');
    expect(dying.connections).toBe(2);
  });

  it('settle: a body that ends within the grace keeps its connection; one that never ends loses it', async () => {
    const settled = (url: string, graceMs: number) =>
      new Promise<void>((resolve, reject) => {
        const req = request(new URL('/v1/messages', url), { method: 'GET', headers: {} });
        req.on('error', reject);
        req.on('response', (res: Response) => {
          // Settled at its first bytes; `close` comes when the body ended in time, or when the grace ran out.
          res.once('data', () => res.settle(graceMs));
          res.on('close', () => resolve());
        });
        req.end();
      });
    const head = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\ndone\r\n';
    const ending = await rawServer(() => ({ pieces: [head, '0\r\n\r\n'] }));
    await settled(ending.url, 5000);
    expect((await send(ending.url)).complete).toBe(true);
    expect(ending.connections).toBe(1);
    expect(ending.closed).toBe(0);
    const endless = await rawServer((n) => ({ pieces: n === 1 ? [head] : ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'] }));
    await settled(endless.url, 20);
    await until(() => endless.closed > 0, 'the unfinished connection to be closed');
    expect(endless.closed).toBe(1);
    expect((await send(endless.url)).body).toBe('ok');
    expect(endless.connections).toBe(2);
  });

  it('opens a new connection when the server closed the idle one', async () => {
    const server = await rawServer(() => ({ pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'], close: true }));
    // The server closes after answering without saying so: the idle connection hears the end and is dropped.
    expect((await send(server.url)).body).toBe('ok');
    await until(() => server.closed > 0, 'the idle connection to be closed on both ends');
    expect((await send(server.url)).body).toBe('ok');
    expect(server.connections).toBe(2);
  });

  it('speaks TLS for https: and verifies the certificate', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keel-tls-'));
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      const server = await rawServer(() => ({ pieces: [ok('secure')] }), { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8') });
      await expect(send(server.url)).rejects.toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
      expect(server.received).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('what the client refuses to send', () => {
  it('a header with a line break (a smuggled second header), a bad name or method: at once, nothing sent', async () => {
    const server = await rawServer(() => ({ pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'] }));
    const url = new URL('/v1/messages', server.url);
    expect(() => request(url, { method: 'POST', headers: { 'x-api-key': 'sk-ant\r\nx-evil: 1' } })).toThrow('the HTTP header "x-api-key" holds a line break or a character it cannot carry');
    expect(() => request(url, { method: 'POST', headers: { 'bad name': 'v' } })).toThrow('invalid HTTP header name "bad name"');
    expect(() => request(url, { method: 'POST /x HTTP/1.1\r\n', headers: {} })).toThrow(/invalid HTTP method/);
    expect(() => request(url, { method: 'POST', headers: { 'x-name': 'caf\u0100' } })).toThrow(/cannot carry/);
    expect(server.connections).toBe(0);
  });
});
