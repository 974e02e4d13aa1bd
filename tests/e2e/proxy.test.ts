/**
 * Proxies, through the binary: tinyproxy on a free port, the scripted model server over TLS with a private CA
 * (trusted through NODE_EXTRA_CA_CERTS), and what the proxy's log says went through it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { freePort, startEverythingHttp } from '../helpers/mcp.js';
import { makePki, type Pki } from '../helpers/pki.js';
import { useScriptedProjects } from '../helpers/project.js';
import { startTinyproxy, type TinyProxy } from '../helpers/proxy.js';

const prepare = useScriptedProjects();
let pki: Pki;
const stops: Array<() => Promise<void>> = [];

beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.cleanup());
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function proxy(opts: Parameters<typeof startTinyproxy>[0] = {}): Promise<TinyProxy> {
  const started = await startTinyproxy(opts);
  stops.push(started.stop);
  return started;
}

/** The scripted model server over TLS, and the environment that trusts it. */
async function secureProject(script: Parameters<typeof prepare>[0]) {
  const project = await prepare(script, { tls: pki.server });
  return { ...project, env: { ...project.env, NODE_EXTRA_CA_CERTS: pki.caFile }, port: Number(new URL(project.server.url).port) };
}

function toolResult(server: ScriptedServer, id: string): { text: string; isError?: boolean } {
  for (const request of server.messageRequests()) {
    for (const message of request.body.messages as Array<{ content: unknown }>) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as Array<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>) {
        if (block.type !== 'tool_result' || block.tool_use_id !== id) continue;
        const text = typeof block.content === 'string' ? block.content : (block.content as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n');
        return { text, isError: block.is_error };
      }
    }
  }
  throw new Error(`no tool result ${id}`);
}

describe('keel -p through a proxy', () => {
  it('reaches the https API through a CONNECT tunnel, verifying the server against NODE_EXTRA_CA_CERTS, and reuses the tunnel', async () => {
    const tiny = await proxy();
    const { ws, env, server, port } = await secureProject([callTool('ls', { path: '.' }, 'ls'), say('through the proxy')]);
    const run = await runKeel(['-p', 'hi', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url() } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('through the proxy\n');
    expect(server.messageRequests()).toHaveLength(2);
    // Two requests, one tunnel: the connection is kept between them.
    expect(tiny.requests()).toEqual([`CONNECT 127.0.0.1:${port} HTTP/1.1`]);
  });

  it('reads the lower-case https_proxy too', async () => {
    const tiny = await proxy();
    const { ws, env, port } = await secureProject([say('lower case')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, https_proxy: tiny.url() } });
    expect(run.stdout).toBe('lower case\n');
    expect(tiny.requests()).toEqual([`CONNECT 127.0.0.1:${port} HTTP/1.1`]);
  });

  it.each(['127.0.0.1', '127.0.0.0/8', 'example.com,127.0.0.1:PORT', '*', '.localhost, ::1/128 127.0.0.1'])('is bypassed by NO_PROXY=%s: the proxy sees nothing', async (entry) => {
    const tiny = await proxy();
    const { ws, env, port } = await secureProject([say('direct')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url(), NO_PROXY: entry.replace('PORT', String(port)) } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('direct\n');
    expect(tiny.requests()).toEqual([]);
  });

  it('is not bypassed by a NO_PROXY entry for another port or network', async () => {
    const tiny = await proxy();
    const { ws, env, port } = await secureProject([say('proxied')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url(), NO_PROXY: `127.0.0.1:${port + 1},10.0.0.0/8,example.com` } });
    expect(run.stdout).toBe('proxied\n');
    expect(tiny.requests()).toEqual([`CONNECT 127.0.0.1:${port} HTTP/1.1`]);
  });
});

describe('a proxy that demands credentials', () => {
  const auth = { user: 'alice', password: 's3cret-pw' };

  it('lets the run through with the user and password in the proxy URL', async () => {
    const tiny = await proxy({ auth });
    const { ws, env, port } = await secureProject([say('authenticated')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url('alice:s3cret-pw') } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('authenticated\n');
    expect(tiny.requests()).toEqual([`CONNECT 127.0.0.1:${port} HTTP/1.1`]);
  });

  it('without credentials: one line naming the proxy, no retries, and the API never reached', async () => {
    const tiny = await proxy({ auth });
    const { ws, env, server } = await secureProject([say('never')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toBe(`keel: proxy ${tiny.url()} requires authentication (407): put the user and password in HTTPS_PROXY (http://user:password@host:port)\n`);
    expect(tiny.requests()).toHaveLength(1);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('with a wrong password: one line naming the proxy and its user, never the password', async () => {
    const tiny = await proxy({ auth });
    const { ws, env } = await secureProject([say('never')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url('alice:wrong-pw') }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    // tinyproxy answers 401 to credentials it refuses (407 to none).
    expect(run.stderr).toBe(`keel: proxy http://alice@127.0.0.1:${tiny.port} requires authentication (401): it refused the user and password in HTTPS_PROXY\n`);
    expect(run.stderr).not.toContain('wrong-pw');
  });
});

describe('a proxy that refuses', () => {
  it('a tunnel to a port it does not allow (403): one line naming the proxy and the target', async () => {
    const tiny = await proxy({ connectPorts: [443] });
    const { ws, env, port } = await secureProject([say('never')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(new RegExp(`^keel: proxy http://127\\.0\\.0\\.1:${tiny.port} \\(from HTTPS_PROXY\\) refused the tunnel to 127\\.0\\.0\\.1:${port} \\(403[^)]*\\)\\n$`));
  });

  it('nothing listening at the proxy: the retries, then one line naming it', async () => {
    const port = await freePort();
    const { ws, env } = await secureProject([say('never')]);
    ws.write('agent.config.ts', 'export default { retry: { maxRetries: 1, baseDelayMs: 10 } };\n');
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: `http://bob:pw@127.0.0.1:${port}` }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`cannot reach proxy http://bob@127.0.0.1:${port} (from HTTPS_PROXY): ECONNREFUSED`);
    expect(run.stderr).not.toContain(':pw@');
  });

  it('a proxy URL that is not one names the variable', async () => {
    const { ws, env } = await secureProject([say('never')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: 'socks5://127.0.0.1:1080' }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('HTTPS_PROXY: proxy socks5://127.0.0.1:1080 uses socks5, which Keel does not support');
  });
});
