/** The `network` service's fetch with nothing configured: direct, redirects followed, sockets unreferenced on request. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import network from '../../../plugins/network/index.js';
import { testKernel } from '../../helpers/kernel.js';

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'CLAUDE_CODE_CLIENT_CERT', 'CLAUDE_CODE_CLIENT_KEY'];
const saved: Record<string, string | undefined> = {};
let server: http.Server;
let base: string;

beforeEach(async () => {
  for (const name of PROXY_VARIABLES) {
    saved[name] = process.env[name];
    delete process.env[name];
  }
  server = http.createServer((req, res) => {
    if (req.url === '/moved') return void res.writeHead(302, { location: '/here' }).end();
    if (req.url === '/here') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('arrived');
    // An event stream that stays open, as an MCP server's GET does.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
  });
  // Only the client's sockets may count below.
  server.on('connection', (socket) => socket.unref());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  for (const name of PROXY_VARIABLES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

/** Sockets keeping the process alive. */
const liveSockets = () => process.getActiveResourcesInfo().filter((type) => type === 'TCPSocketWrap').length;

describe("the network service's fetch", () => {
  it('with no proxy and no certificate, connects directly and follows redirects', async () => {
    const service = testKernel([network()]).services.require('network', 'test');
    expect(service.configured).toBe(false);
    const response = await service.fetch(`${base}/moved`);
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${base}/here`);
    expect(await response.text()).toBe('arrived');
  });

  it('with unref, an open response stream does not keep the process alive; without it, it does', async () => {
    const service = testKernel([network()]).services.require('network', 'test');
    const before = liveSockets();
    const idle = await service.fetch(`${base}/events`, {}, { unref: true });
    expect(idle.status).toBe(200);
    expect(liveSockets()).toBe(before);
    const held = await service.fetch(`${base}/events`);
    expect(liveSockets()).toBe(before + 1);
    await idle.body?.cancel();
    await held.body?.cancel();
  });
});
