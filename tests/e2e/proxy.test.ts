/**
 * Proxies, through the binary: tinyproxy on a free port, the scripted model server over TLS with a private CA
 * (trusted through NODE_EXTRA_CA_CERTS), and what the proxy's log says went through it.
 */
import http from 'node:http';
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { FAKE_BROWSER, freePort, startEverythingHttp, startOAuthServer } from '../helpers/mcp.js';
import { makePki, type Pki } from '../helpers/pki.js';
import { useScriptedProjects } from '../helpers/project.js';
import { startTinyproxy, type TinyProxy } from '../helpers/proxy.js';
import { startOpenAIServer } from '../helpers/openai-server.js';
import { makeWorkspace } from '../helpers/workspace.js';
import { findOnPath, probe } from '../../plugins/sandbox/bwrap.js';

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

  it('reaches an https:// proxy over TLS, with the TLS of the server inside that (the private CA trusted for both)', async () => {
    const tiny = await proxy();
    // TLS in front of tinyproxy: the proxy's own certificate is the test CA's 127.0.0.1 one.
    const front = tls.createServer(pki.server, (socket) => {
      const back = net.connect(tiny.port, '127.0.0.1');
      socket.pipe(back).pipe(socket);
      socket.on('error', () => back.destroy());
      back.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', () => resolve()));
    stops.push(() => new Promise<void>((resolve) => front.close(() => resolve())));
    const { ws, env, port } = await secureProject([say('tls in tls')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: `https://127.0.0.1:${(front.address() as AddressInfo).port}` } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('tls in tls\n');
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

describe('TLS inside the tunnel', () => {
  it('checks the certificate of the server, not of the proxy: a server nothing trusts is refused', async () => {
    const tiny = await proxy();
    const { ws, env, server } = await secureProject([say('never')]);
    const { NODE_EXTRA_CA_CERTS: _trusted, ...untrusting } = env;
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...untrusting, HTTPS_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/^keel: cannot reach the Anthropic API: its TLS certificate is not trusted \(.*\); behind a proxy or a private CA, set NODE_EXTRA_CA_CERTS/);
    expect(tiny.requests()).toHaveLength(1);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('reaches a server by its name through the tunnel, verified against that name', async () => {
    const tiny = await proxy();
    const { ws, env, port } = await secureProject([say('by name')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, ANTHROPIC_BASE_URL: `https://localhost:${port}`, HTTPS_PROXY: tiny.url() } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('by name\n');
    expect(tiny.requests()).toEqual([`CONNECT localhost:${port} HTTP/1.1`]);
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
  it('the API over plain http, forwarded by a proxy that wants credentials: one line, no retries', async () => {
    const tiny = await proxy({ auth: { user: 'u', password: 'p' } });
    const { ws, env, server } = await prepare([say('never')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTP_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toBe('keel: the proxy in HTTP_PROXY requires authentication (407): put the user and password in its URL (http://user:password@host:port)\n');
    expect(tiny.requests()).toHaveLength(1);
    expect(server.messageRequests()).toHaveLength(0);
  });

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

  it.each([
    ['accepts and never answers CONNECT', 'stall', 'no answer to CONNECT 127.0.0.1:PORT within 0.5 s'],
    ['closes the connection before answering', 'drop', 'it closed the connection before answering CONNECT 127.0.0.1:PORT'],
  ] as const)('a proxy that %s: the retries, then one line naming it (never its password)', async (_what, behaviour, said) => {
    const seen: string[] = [];
    const fake = net.createServer((socket) => {
      socket.once('data', (d) => {
        seen.push(d.toString('latin1').split('\r\n')[0]!);
        if (behaviour === 'drop') socket.destroy();
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', () => resolve()));
    stops.push(() => new Promise<void>((resolve) => { fake.close(() => resolve()); fake.unref(); }));
    const fakePort = (fake.address() as AddressInfo).port;
    const { ws, env, server, port } = await secureProject([say('never')]);
    ws.write('agent.config.ts', 'export default { retry: { maxRetries: 1, baseDelayMs: 10 }, network: { proxyTimeoutMs: 500 } };\n');
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: `http://bob:pw@127.0.0.1:${fakePort}` }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`cannot reach proxy http://bob@127.0.0.1:${fakePort} (from HTTPS_PROXY): ${said.replace('PORT', String(port))}`);
    expect(run.stderr).not.toContain(':pw@');
    expect(seen).toEqual([`CONNECT 127.0.0.1:${port} HTTP/1.1`, `CONNECT 127.0.0.1:${port} HTTP/1.1`]);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('a proxy URL that is not one names the variable', async () => {
    const { ws, env } = await secureProject([say('never')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: 'socks5://127.0.0.1:1080' }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('HTTPS_PROXY: proxy socks5://127.0.0.1:1080 uses socks5, which Keel does not support');
  });

  it('a proxy URL that is not one, with a password that is not percent-encoded, never prints the password (run and doctor)', async () => {
    const { ws, env } = await secureProject([say('never')]);
    const proxyEnv = { ...env, https_proxy: 'alice:s3/cret@proxy.corp:3128' };
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: proxyEnv, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('https_proxy: not a proxy URL: "alice@proxy.corp:3128"');
    const doctor = await runKeel(['doctor'], { cwd: ws.dir, env: proxyEnv, timeoutMs: 60_000 });
    expect(doctor.stdout + doctor.stderr).toContain('https_proxy: not a proxy URL');
    for (const out of [run.stdout, run.stderr, doctor.stdout, doctor.stderr]) expect(out).not.toContain('s3/cret');
  });
});

/** An http (or, with the test CA's server certificate, https) server with pages that echo their path. */
async function pageServer(body: string, secure = false): Promise<string> {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`${body} (${req.url})`);
  };
  const server = secure ? https.createServer(pki.server, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `${secure ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const load = (...names: string[]) => callTool('tool_search', { query: `select:${names.join(',')}` }, 'search');

describe('every outbound connection goes through the proxy', () => {
  it('the API over plain http: each request forwarded to the proxy (with its credentials) with the absolute URI', async () => {
    const tiny = await proxy({ auth: { user: 'u', password: 'p' } });
    const { ws, env, server } = await prepare([callTool('ls', { path: '.' }, 'ls'), say('forwarded')]);
    const run = await runKeel(['-p', 'hi', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, HTTP_PROXY: tiny.url('u:p') } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('forwarded\n');
    expect(server.messageRequests()).toHaveLength(2);
    expect(tiny.requests()).toHaveLength(2);
    for (const line of tiny.requests()) expect(line).toMatch(new RegExp(`^POST ${server.url.replace(/\./g, '\\.')}/v1/messages\\S* HTTP/1\\.1$`));
  });

  it('web_fetch: a plain http page forwarded, an https page through a tunnel that trusts the private CA', async () => {
    const tiny = await proxy();
    const plain = await pageServer('plain page');
    const secure = await pageServer('secure page', true);
    const { ws, env, server, port } = await secureProject([
      load('web_fetch'),
      callTool('web_fetch', { url: `${plain}/a`, prompt: 'read' }, 'plain'),
      callTool('web_fetch', { url: `${secure}/b`, prompt: 'read' }, 'secure'),
      say('fetched'),
    ]);
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url(), HTTP_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('fetched\n');
    expect(toolResult(server, 'plain')).toMatchObject({ text: expect.stringContaining('plain page (/a)') });
    expect(toolResult(server, 'secure')).toMatchObject({ text: expect.stringContaining('secure page (/b)') });
    const requests = tiny.requests();
    expect(requests).toContain(`GET ${plain}/a HTTP/1.1`);
    expect(requests).toContain(`CONNECT ${secure.slice('https://'.length)} HTTP/1.1`);
    expect(requests).toContain(`CONNECT 127.0.0.1:${port} HTTP/1.1`);
  });

  it('web_fetch through a proxy that wants credentials: the tool result names the proxy', async () => {
    const tiny = await proxy({ auth: { user: 'u', password: 'p' } });
    const plain = await pageServer('never');
    const { ws, env, server } = await prepare([load('web_fetch'), callTool('web_fetch', { url: `${plain}/x`, prompt: 'read' }, 'denied'), say('done')]);
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, HTTP_PROXY: tiny.url(), NO_PROXY: server.url.slice('http://'.length) }, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(toolResult(server, 'denied')).toEqual({ text: `web_fetch: could not fetch ${plain}/x: proxy ${tiny.url()} requires authentication (407): put the user and password in HTTP_PROXY (http://user:password@host:port)`, isError: true });
  });

  it.each(['streamableHttp', 'sse'] as const)('MCP over HTTP (%s): the server is reached through the proxy', async (mode) => {
    const tiny = await proxy();
    const everything = await startEverythingHttp(mode);
    stops.push(everything.stop);
    const { ws, env, server } = await secureProject([load('mcp__remote__get-sum'), callTool('mcp__remote__get-sum', { a: 2, b: 40 }, 'sum'), say('done')]);
    const config = JSON.stringify({ mcpServers: { remote: { type: mode === 'sse' ? 'sse' : 'http', url: everything.url } } });
    const run = await runKeel(['-p', 'go', '--mcp-config', config, '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url(), HTTP_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(toolResult(server, 'sum').text).toContain('42');
    const origin = new URL(everything.url).origin;
    const forwarded = tiny.requests().filter((line) => line.includes(` ${origin}/`));
    // Streamable HTTP POSTs every message; SSE GETs its event stream and POSTs to the endpoint it names.
    expect(forwarded.filter((line) => line.startsWith('POST ')).length).toBeGreaterThanOrEqual(2);
    if (mode === 'sse') expect(forwarded).toContain(`GET ${everything.url} HTTP/1.1`);
  }, 90_000);

  it('MCP over HTTP through a proxy that wants credentials: the failure names the proxy', async () => {
    const tiny = await proxy({ auth: { user: 'u', password: 'p' } });
    const everything = await startEverythingHttp();
    stops.push(everything.stop);
    const { ws, env } = await secureProject([]);
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ mcpServers: { remote: { type: 'http', url: everything.url } } }));
    const run = await runKeel(['mcp', 'list'], { cwd: ws.dir, env: { ...env, HTTP_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.stdout).toContain(`proxy ${tiny.url()} requires authentication (407): put the user and password in HTTP_PROXY`);
  }, 90_000);

  it('MCP OAuth: discovery, registration and the token request go through the proxy', async () => {
    const tiny = await proxy();
    const oauth = await startOAuthServer();
    stops.push(oauth.stop);
    const { ws, env, server } = await secureProject([load('mcp__secure__whoami'), callTool('mcp__secure__whoami', {}, 'who'), say('done')]);
    const config = JSON.stringify({ mcpServers: { secure: { type: 'http', url: oauth.url } } });
    const run = await runKeel(['-p', 'who am I?', '--mcp-config', config, '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env: { ...env, HTTPS_PROXY: tiny.url(), HTTP_PROXY: tiny.url(), BROWSER: FAKE_BROWSER, FAKE_BROWSER_LOG: path.join(ws.home, 'browser.log') },
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(toolResult(server, 'who').text).toBe('authorized as a registered client');
    const base = oauth.url.replace('/mcp', '');
    const forwarded = tiny.requests().filter((line) => line.includes(` ${base}/`));
    expect(forwarded).toEqual(expect.arrayContaining([expect.stringMatching(/^GET .*\/\.well-known\/oauth-/), `POST ${base}/register HTTP/1.1`, `POST ${base}/token HTTP/1.1`]));
  }, 90_000);

  it('web_search through SearXNG: the query goes through the proxy', async () => {
    const tiny = await proxy();
    const searx = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [{ title: 'Found', url: 'https://nodejs.org/', content: 'via the proxy' }] }));
    });
    await new Promise<void>((resolve) => searx.listen(0, '127.0.0.1', () => resolve()));
    stops.push(() => new Promise<void>((resolve) => searx.close(() => resolve())));
    const base = `http://127.0.0.1:${(searx.address() as AddressInfo).port}`;
    const { ws, env, server } = await secureProject([callTool('web_search', { query: 'corp proxy' }, 'search'), say('searched')]);
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ webSearch: { searxng: base } }));
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url(), HTTP_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(toolResult(server, 'search').text).toContain('via the proxy');
    expect(tiny.requests()).toContain(`GET ${base}/search?q=corp+proxy&format=json HTTP/1.1`);
  });

  it('the OpenAI-compatible provider: its requests go through the proxy', async () => {
    const tiny = await proxy();
    const openai = await startOpenAIServer([{ text: 'from chat completions' }]);
    stops.push(() => openai.close());
    const ws = makeWorkspace({ git: true });
    stops.push(async () => ws.cleanup());
    ws.write('agent.config.json', JSON.stringify({ provider: 'openai', baseURL: openai.url, apiKey: 'sk-local', model: 'gpt-4o-mini', smallModel: 'gpt-4o-mini' }));
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, HTTP_PROXY: tiny.url() }, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('from chat completions\n');
    expect(tiny.requests()).toEqual([`POST ${openai.url}/chat/completions HTTP/1.1`]);
  });
});

const bwrap = findOnPath('bwrap');
const noSandbox = !bwrap || Boolean(probe(bwrap));

describe.skipIf(noSandbox)("the sandbox's allowed domains", () => {
  it("are reached through the user's proxy: a sandboxed curl's CONNECT and plain-http request go on through it", async () => {
    const tiny = await proxy({ auth: { user: 'u', password: 'p' } });
    const plain = await pageServer('PLAIN-PAGE');
    const secure = await pageServer('SECURE-PAGE', true);
    const at = (base: string) => base.replace('127.0.0.1', 'localhost');
    const { ws, env, server } = await prepare([
      callTool('bash', { command: `curl -sS --max-time 20 ${at(plain)}/p` }, 'plain'),
      callTool('bash', { command: `curl -sS -k --max-time 20 ${at(secure)}/s` }, 'secure'),
      say('done'),
    ]);
    ws.write('agent.config.ts', "export default { sandbox: { enabled: true, network: { allowedDomains: ['localhost'] } } };\n");
    const run = await runKeel(['-p', 'fetch', '--trust', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, HTTP_PROXY: tiny.url('u:p'), HTTPS_PROXY: tiny.url('u:p'), NO_PROXY: '127.0.0.1' }, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(toolResult(server, 'plain').text).toContain('PLAIN-PAGE (/p)');
    expect(toolResult(server, 'secure').text).toContain('SECURE-PAGE (/s)');
    const seen = tiny.requests();
    expect(seen).toContain(`GET ${at(plain)}/p HTTP/1.1`);
    expect(seen).toContain(`CONNECT localhost:${new URL(secure).port} HTTP/1.1`);
    // What the sandbox's own proxy got is never the user's proxy credentials' business: they stay outside.
    for (const id of ['plain', 'secure']) expect(toolResult(server, id).text).not.toContain('u:p');
  }, 120_000);

  it("a refusal by the user's proxy reaches the sandboxed command as a 502 (the reason in its body), never with the password", async () => {
    const tiny = await proxy({ auth: { user: 'u', password: 'right' } });
    const secure = await pageServer('SECURE-PAGE', true);
    const { ws, env, server } = await prepare([
      callTool('bash', { command: `curl -sS -k --max-time 20 ${secure.replace('127.0.0.1', 'localhost')}/s` }, 'secure'),
      say('done'),
    ]);
    ws.write('agent.config.ts', "export default { sandbox: { enabled: true, network: { allowedDomains: ['localhost'] } } };\n");
    const run = await runKeel(['-p', 'fetch', '--trust', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: tiny.url('u:wrong'), NO_PROXY: '127.0.0.1' }, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    const result = toolResult(server, 'secure').text;
    expect(result).not.toContain('SECURE-PAGE');
    expect(result).toContain('CONNECT tunnel failed, response 502');
    expect(result).not.toContain('wrong');
  }, 120_000);
});

describe('keel doctor', () => {
  it('shows the proxy in force for the API host, without its password; "bypassed by NO_PROXY"; and "none"', async () => {
    const { ws, env, server } = await prepare([]);
    const host = new URL(server.url);
    const via = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env, ANTHROPIC_BASE_URL: `https://${host.host}`, HTTPS_PROXY: 'http://carol:hunter2@proxy.corp.example:3128' }, timeoutMs: 60_000 });
    expect(via.stdout).toContain(`https://${host.host}: through proxy http://carol@proxy.corp.example:3128 (HTTPS_PROXY), a CONNECT tunnel`);
    expect(via.stdout + via.stderr).not.toContain('hunter2');
    const bypassed = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env, HTTPS_PROXY: 'http://proxy.corp.example:3128', HTTP_PROXY: 'http://proxy.corp.example:3128', NO_PROXY: '127.0.0.0/8' }, timeoutMs: 60_000 });
    expect(bypassed.stdout).toContain(`${server.url}: bypassed by NO_PROXY (127.0.0.0/8), connects directly`);
    const none = await runKeel(['doctor'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(none.stdout).toContain(`${server.url}: none (no proxy variable set)`);
    expect(none.stdout).not.toContain('ALL_PROXY');
    // ALL_PROXY alone is not read: doctor says so, without its value (it may hold a password).
    const all = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env, ALL_PROXY: 'socks5://dave:s3cret@proxy.corp.example:1080' }, timeoutMs: 60_000 });
    expect(all.stdout).toContain('ALL_PROXY is set, but Keel reads only HTTPS_PROXY and HTTP_PROXY, so it connects directly');
    expect(all.stdout + all.stderr).not.toContain('s3cret');
  }, 90_000);
});
