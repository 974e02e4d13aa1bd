/**
 * The cloud providers' fetch: without a `network` service it is Keel's transport; with one, requests go through its
 * `fetch` or over the agent its `agentFor(url)` gives — still with the attempt's abort, the watchdog feed and the
 * pre-built body parts.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { prebuild } from '../../../plugins/query-anthropic/body.js';
import { networkFetch, type NetworkService } from '../../../plugins/query-anthropic/network-fetch.js';
import { ALIVE, ATTEMPT_SIGNAL } from '../../../plugins/query-anthropic/transport.js';
import { PREBUILT } from '../../../plugins/query-anthropic/body.js';

let server: http.Server | undefined;
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Echoes the body back in three chunks; `/hang` never answers. */
async function start(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    bodies.push(Buffer.concat(chunks).toString('utf8'));
    if (req.url === '/hang') return;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('one,');
    res.write('two,');
    res.end('three');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, bodies };
}

/** An agent that counts the connections it opens. */
class CountingAgent extends http.Agent {
  opened = 0;
  override createConnection(...args: Parameters<http.Agent['createConnection']>) {
    this.opened++;
    return super.createConnection(...args);
  }
}

function request(url: string, alive: Array<number>, signal?: AbortSignal) {
  const { messages, prebuilt } = prebuild([{ role: 'user', content: 'hello' }]);
  const body = JSON.stringify({ model: 'm', messages });
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body, [PREBUILT]: [prebuilt], [ALIVE]: (chunk?: Uint8Array) => alive.push(chunk?.byteLength ?? 0), ...(signal ? { [ATTEMPT_SIGNAL]: signal } : {}) };
  return { url, init: init as RequestInit };
}

const EXPECTED_BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] });

describe('networkFetch', () => {
  it('goes over the agent agentFor gives, with the body spliced and every chunk reported alive', async () => {
    const { url, bodies } = await start();
    const agent = new CountingAgent();
    const asked: string[] = [];
    const fetch = networkFetch(() => ({ agentFor: (target) => (asked.push(target), agent) }));
    const alive: number[] = [];
    const r = request(`${url}/v1/messages`, alive);
    const response = await fetch(r.url, r.init);
    expect(await response.text()).toBe('one,two,three');
    expect(bodies).toEqual([EXPECTED_BODY]);
    expect(asked).toEqual([`${url}/v1/messages`]);
    expect(agent.opened).toBe(1);
    // The headers (0), then the body's bytes.
    expect(alive[0]).toBe(0);
    expect(alive.slice(1).reduce((a, b) => a + b, 0)).toBe('one,two,three'.length);
    agent.destroy();
  });

  it('goes through the service’s fetch when it has one, with the attempt’s signal', async () => {
    const { url, bodies } = await start();
    const seen: Array<AbortSignal | null | undefined> = [];
    const network: NetworkService = { fetch: (input, init) => (seen.push(init?.signal), globalThis.fetch(input, init)) };
    const fetch = networkFetch(() => network);
    const controller = new AbortController();
    const r = request(`${url}/x`, [], controller.signal);
    const response = await fetch(r.url, r.init);
    expect(await response.text()).toBe('one,two,three');
    expect(bodies).toEqual([EXPECTED_BODY]);
    expect(seen[0]).toBe(controller.signal);
  });

  it('an aborted attempt ends a request that never answers, over an agent too', async () => {
    const { url } = await start();
    const agent = new CountingAgent();
    const fetch = networkFetch(() => ({ agentFor: () => agent }));
    const controller = new AbortController();
    const r = request(`${url}/hang`, [], controller.signal);
    const pending = fetch(r.url, r.init);
    setImmediate(() => controller.abort(new Error('watchdog')));
    await expect(pending).rejects.toThrow();
    agent.destroy();
  });

  it('without a network service, or when agentFor has no agent for the URL, is Keel’s own transport', async () => {
    const { url, bodies } = await start();
    for (const network of [undefined, {} as NetworkService, { agentFor: () => undefined }]) {
      const fetch = networkFetch(() => network);
      const r = request(`${url}/y`, []);
      const response = await fetch(r.url, r.init);
      expect(await response.text()).toBe('one,two,three');
    }
    expect(bodies).toEqual([EXPECTED_BODY, EXPECTED_BODY, EXPECTED_BODY]);
  });
});
