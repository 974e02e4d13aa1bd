import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest, type ScriptedServer } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { collect, runKeel, spawnKeel } from '../helpers/cli.js';
import { EVERYTHING, FAKE_BROWSER, FILESYSTEM, processesGone, startEverythingHttp, startOAuthServer, testServer } from '../helpers/mcp.js';
import { until } from '../helpers/until.js';

const prepare = useScriptedProjects();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** The tool_result blocks the model received in request `index`. */
function resultsIn(srv: ScriptedServer, index: number): Array<{ content: unknown; is_error?: boolean }> {
  const messages = srv.messageRequests()[index]!.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages[messages.length - 1]!.content as Array<{ type: string; content: unknown; is_error?: boolean }>;
  return last.filter((b) => b.type === 'tool_result');
}

const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));
const toolNames = (request: RecordedRequest) => (request.body.tools as Array<{ name: string }>).map((t) => t.name);
const mcpConfig = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers });
const load = (...names: string[]) => callTool('tool_search', { query: `select:${names.join(',')}` });

describe('keel mcp', () => {
  it('adds, lists, shows and removes servers, writing .mcp.json and $KEEL_HOME/mcp.json', async () => {
    const { env, ws } = await prepare();
    ws.write('notes.txt', 'hello\n');
    let run = await runKeel(['mcp', 'add', 'files', '--', process.execPath, FILESYSTEM, ws.dir], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`Added MCP server files in ${ws.path('.mcp.json')}\n`);
    expect(JSON.parse(readFileSync(ws.path('.mcp.json'), 'utf8'))).toEqual({ mcpServers: { files: { command: process.execPath, args: [FILESYSTEM, ws.dir], } } });

    run = await runKeel(['mcp', 'add', '--scope', 'user', 'broken', '/nonexistent/server-binary'], { cwd: ws.dir, env });
    expect(run.stdout).toBe(`Added MCP server broken in ${path.join(ws.home, 'mcp.json')}\n`);

    // Untrusted: the project's servers are not even read.
    run = await runKeel(['mcp', 'list'], { cwd: ws.dir, env });
    expect(run.stderr).toContain('is not a trusted folder');
    expect(run.stderr).toContain('.mcp.json');
    expect(run.stdout).toBe('broken  failed  stdio  0 tools  error: spawn /nonexistent/server-binary ENOENT\n');
    expect(run.code).toBe(1);

    await runKeel(['trust'], { cwd: ws.dir, env });
    run = await runKeel(['mcp', 'list'], { cwd: ws.dir, env });
    expect(run.stdout).toContain('files  connected  stdio  14 tools\n');
    expect(run.stderr).toContain(`keel: warn: starting project MCP servers seen for the first time: files (${process.execPath} ${FILESYSTEM} ${ws.dir}, from ${ws.path('.mcp.json')})`);
    expect(run.stdout).toContain('broken  failed  stdio  0 tools  error: spawn /nonexistent/server-binary ENOENT\n');
    // The server's stderr went to its log, not to the terminal.
    expect(run.stderr).not.toContain('Secure MCP Filesystem Server');
    expect(readFileSync(path.join(ws.home, 'logs', 'mcp', 'files.log'), 'utf8')).toContain('Secure MCP Filesystem Server');

    run = await runKeel(['mcp', 'get', 'files'], { cwd: ws.dir, env });
    expect(run.stdout).toContain(`source: ${ws.path('.mcp.json')}`);
    expect(run.stdout).toContain('status: connected, 14 tools');

    run = await runKeel(['mcp', 'remove', 'broken'], { cwd: ws.dir, env });
    expect(run.stdout).toBe(`Removed MCP server broken from ${path.join(ws.home, 'mcp.json')}\n`);
    run = await runKeel(['mcp', 'remove', 'broken'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no MCP server named "broken"');
    run = await runKeel(['mcp', 'add', 'web', '--transport', 'http', 'not-a-url'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('keel: keel mcp add: a http server needs an http(s) URL, got "not-a-url"\n');
    expect(await processesGone(ws.dir)).toEqual([]);
  }, 120_000);
});

describe('start-up', () => {
  it('loads no MCP code without servers, and loads the SDK once a server is configured', async () => {
    const { env, ws } = await prepare([say('one'), say('two')]);
    // The MCP SDK is a vendor bundle of its own, outside the CLI and its start-up snapshot.
    const bin = path.resolve(__dirname, '../../dist/bin');
    expect(readFileSync(path.join(bin, 'keel.cjs'), 'utf8')).not.toContain('Server does not support');
    expect(readFileSync(path.join(bin, 'vendor', 'mcp.cjs'), 'utf8')).toContain('Server does not support');
    const hooks = path.resolve(__dirname, 'fixtures/trace-reads.mjs');
    const mcpBundle = (file: string) => readFileSync(file, 'utf8').split('\n').filter((f) => f.endsWith('/vendor/mcp.cjs'));
    const plain = ws.path('plain.trace');
    let run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, NODE_OPTIONS: `--import=${hooks}`, TRACE_READS_FILE: plain } });
    expect(run.code).toBe(0);
    expect(readFileSync(plain, 'utf8')).toContain('/vendor/core.cjs');
    expect(mcpBundle(plain)).toEqual([]);
    const withServer = ws.path('server.trace');
    run = await runKeel(['-p', 'hi', '--mcp-config', mcpConfig({ t: testServer(ws.dir) })], {
      cwd: ws.dir,
      env: { ...env, NODE_OPTIONS: `--import=${hooks}`, TRACE_READS_FILE: withServer },
    });
    expect(run.code).toBe(0);
    expect(mcpBundle(withServer).length).toBe(1);
  });
});

describe('MCP tools in a headless session', () => {
  it('uses a filesystem-server tool end to end, listing the new project server once', async () => {
    let dir = '';
    const { env, ws, server } = await prepare([
      load('mcp__files__read_text_file'),
      // The server wants absolute paths.
      () => callTool('mcp__files__read_text_file', { path: path.join(dir, 'notes.txt') }),
      say('done'),
    ]);
    dir = ws.dir;
    ws.write('notes.txt', 'the notes say 7\n');
    ws.write('.mcp.json', mcpConfig({ files: { command: process.execPath, args: [FILESYSTEM, '${PROJECT_DIR:-/nowhere}'] } }));
    const withDir = { ...env, PROJECT_DIR: ws.dir };
    const run = await runKeel(['-p', 'what do the notes say?', '--trust', '--permission-mode', 'auto'], { cwd: ws.dir, env: withDir });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('done\n');
    expect(run.stderr).toContain(`starting project MCP servers seen for the first time: files (${process.execPath} ${FILESYSTEM} \${PROJECT_DIR:-/nowhere}, from ${ws.path('.mcp.json')})`);
    expect(statSync(path.join(ws.home, 'mcp-approvals.json')).mode & 0o777).toBe(0o600);
    const [result] = resultsIn(server, 2);
    expect(result!.is_error).toBeUndefined();
    expect(text(result!.content)).toBe('the notes say 7\n');

    // Seen before and unchanged: not listed again.
    server.push(say('again'));
    const second = await runKeel(['-p', 'hi', '--trust', '--permission-mode', 'auto'], { cwd: ws.dir, env: withDir });
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain('seen for the first time');
    expect(await processesGone(ws.dir)).toEqual([]);
  });
});

describe('MCP servers over the wire', () => {
  it('calls server-everything over streamable HTTP and over stdio, and attaches an @server:uri resource', async () => {
    const http = await startEverythingHttp();
    stops.push(http.stop);
    const { env, ws, server } = await prepare([
      load('mcp__remote__get-sum', 'mcp__local__echo'),
      callTool('mcp__remote__get-sum', { a: 2, b: 40 }),
      callTool('mcp__local__echo', { message: 'over stdio' }),
      say('done'),
    ]);
    const config = mcpConfig({ remote: { type: 'http', url: http.url }, local: { command: process.execPath, args: [EVERYTHING, 'stdio', ws.dir] } });
    const run = await runKeel(['-p', 'read @local:demo://resource/static/document/architecture.md and add', '--mcp-config', config, '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env,
      timeoutMs: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // The resource was read and attached to the request.
    const prompt = server.messageRequests()[0]!.body.messages[0].content as Array<{ type: string; text: string }>;
    expect(prompt[0]!.text).toBe('read @local:demo://resource/static/document/architecture.md and add');
    expect(prompt[1]!.text).toMatch(/^<resource server="local" uri="demo:\/\/resource\/static\/document\/architecture.md">\n[\s\S]*Architecture/);
    expect(text(resultsIn(server, 2)[0]!.content)).toContain('42');
    expect(text(resultsIn(server, 3)[0]!.content)).toContain('over stdio');
    expect(await processesGone(ws.dir)).toEqual([]);
  }, 90_000);

  it('runs an MCP prompt headless: keel -p "/mcp__local__args-prompt …" waits for the server instead of calling it unknown; a name no server offers is unknown', async () => {
    const { env, ws, server } = await prepare([say('Sunny in Paris.')]);
    const config = mcpConfig({ local: { command: process.execPath, args: [EVERYTHING, 'stdio', ws.dir] } });
    const run = await runKeel(['-p', '/mcp__local__args-prompt city=Paris', '--mcp-config', config], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Sunny in Paris.\n');
    const sent = server.messageRequests()[0]!.body.messages[0] as { content: unknown };
    expect(text(sent.content)).toContain("What's weather in Paris?");
    // A name no server offers, once the servers have answered, is an unknown command (exit 2), not a paid prompt.
    const { env: env2, ws: ws2, server: server2 } = await prepare([say('no such prompt')]);
    const other = await runKeel(['-p', '/mcp__local__nope', '--mcp-config', mcpConfig({ local: { command: process.execPath, args: [EVERYTHING, 'stdio', ws2.dir] } })], { cwd: ws2.dir, env: env2, timeoutMs: 60_000 });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/^keel: unknown command \/mcp__local__nope\b/);
    expect(server2.messageRequests()).toHaveLength(0);
    expect(await processesGone(ws.dir)).toEqual([]);
  }, 90_000);

  it('calls server-everything over legacy SSE, and sends configured headers with ${VAR} expanded', async () => {
    const sse = await startEverythingHttp('sse');
    stops.push(sse.stop);
    // A peer that only records what it is sent (and refuses, so that server fails).
    const seen: http.IncomingHttpHeaders[] = [];
    const recorder = http.createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    stops.push(() => new Promise((resolve) => recorder.close(() => resolve())));
    const recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/mcp`;
    const { env, ws, server } = await prepare([load('mcp__old__get-sum'), callTool('mcp__old__get-sum', { a: 1, b: 2 }), say('done')]);
    const config = mcpConfig({
      old: { type: 'sse', url: sse.url },
      recorded: { type: 'http', url: recorderUrl, headers: { 'X-Api-Token': 'Bearer ${REMOTE_TOKEN}', 'X-Plain': '${UNSET_VAR:-fallback}' } },
    });
    const run = await runKeel(['-p', 'add', '--mcp-config', config, '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, REMOTE_TOKEN: 's3cret' }, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(text(resultsIn(server, 2)[0]!.content)).toContain('3');
    expect(seen[0]).toMatchObject({ 'x-api-token': 'Bearer s3cret', 'x-plain': 'fallback' });
  }, 90_000);

  it('sends the first request before a slow server has initialised, with three servers configured', async () => {
    let dir = '';
    const { env, ws, server } = await prepare([
      (request) => {
        // The slow server answers nothing until this file exists, so if start-up waited for it, this request
        // could never arrive (and the run would time out).
        writeFileSync(path.join(dir, 'release'), '');
        expect(toolNames(request).filter((n) => n.startsWith('mcp__slow__'))).toEqual([]);
        return load('mcp__slow__echo');
      },
      callTool('mcp__slow__echo', { message: 'finally' }),
      say('done'),
    ]);
    dir = ws.dir;
    const config = mcpConfig({
      slow: testServer(ws.dir, '--slow-until', ws.path('release')),
      files: { command: process.execPath, args: [FILESYSTEM, ws.dir] },
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio', ws.dir] },
    });
    const run = await runKeel(['-p', 'go', '--mcp-config', config, '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, MCP_TIMEOUT: '120000' }, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(text(resultsIn(server, 2)[0]!.content)).toContain('echo: finally');
    expect(await processesGone(ws.dir)).toEqual([]);
  }, 90_000);

  it('carries at most 12 MCP schemas (and no flood of any) with 200 MCP tools, and tool_search reaches any of them', async () => {
    const { env, ws, server } = await prepare([callTool('tool_search', { query: 'numbered tool 199', max_results: 1 }), load('mcp__many__tool_137'), callTool('mcp__many__tool_137', {}), say('done')]);
    const config = mcpConfig({ many: testServer(ws.dir, '--tools', '200') });
    const run = await runKeel(['-p', 'go', '--mcp-config', config, '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    for (const request of server.messageRequests()) {
      expect(toolNames(request).filter((n) => n.startsWith('mcp__')).length).toBeLessThanOrEqual(12);
      expect(toolNames(request).length).toBeLessThanOrEqual(20);
    }
    expect(text(resultsIn(server, 1)[0]!.content)).toContain('mcp__many__tool_199');
    expect(toolNames(server.messageRequests()[2]!)).toContain('mcp__many__tool_137');
    expect(text(resultsIn(server, 3)[0]!.content)).toBe('tool 137 ran');
  }, 90_000);
});

describe('servers that fail', () => {
  it('turns a crash, a hang and garbage into error results, reconnects, and the turn goes on', async () => {
    const { env, ws, server } = await prepare([
      load('mcp__t__crash', 'mcp__t__echo', 'mcp__t__hang', 'mcp__t__garbage'),
      callTool('mcp__t__crash', {}),
      callTool('mcp__t__echo', { message: 'after the crash' }),
      callTool('mcp__t__hang', {}),
      callTool('mcp__t__garbage', {}),
      callTool('mcp__t__echo', { message: 'after the garbage' }),
      say('survived'),
    ]);
    const config = mcpConfig({ t: { ...testServer(ws.dir), timeout: 3000 } });
    const run = await runKeel(['-p', 'go', '--mcp-config', config, '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('survived\n');
    const crash = resultsIn(server, 2)[0]!;
    expect(crash.is_error).toBe(true);
    expect(text(crash.content)).toBe('Error: MCP server t: the connection closed during the call (the server exited (code 3))');
    const first = resultsIn(server, 3)[0]!;
    expect(first.is_error).toBeUndefined();
    expect(text(first.content)).toMatch(/^echo: after the crash \(pid \d+, call 1\)$/);
    const hang = resultsIn(server, 4)[0]!;
    expect(hang).toMatchObject({ is_error: true, content: 'Error: MCP server t: the call timed out after 3000 ms' });
    const garbage = resultsIn(server, 5)[0]!;
    expect(garbage.is_error).toBe(true);
    expect(text(garbage.content)).toContain('the server sent something that is not a JSON-RPC message on stdout');
    const last = resultsIn(server, 6)[0]!;
    expect(last.is_error).toBeUndefined();
    expect(text(last.content)).toMatch(/^echo: after the garbage/);
    // The warnings name what happened.
    expect(run.stderr).toContain('MCP server t disconnected: the server exited (code 3)');
    expect(await processesGone(ws.dir)).toEqual([]);
  }, 90_000);

  it('follows a changed tool list', async () => {
    const { env, ws, server } = await prepare([
      load('mcp__t__add_tool'),
      callTool('mcp__t__add_tool', {}),
      load('mcp__t__added_tool'),
      callTool('mcp__t__added_tool', {}),
      say('done'),
    ]);
    const run = await runKeel(['-p', 'go', '--mcp-config', mcpConfig({ t: testServer(ws.dir) }), '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(text(resultsIn(server, 3)[0]!.content)).toContain('Loaded 1 tool');
    expect(text(resultsIn(server, 4)[0]!.content)).toBe('hello from added_tool');
  });

  it('caps a 5 MB result and lets the compaction tiers handle the rest', async () => {
    const small = (r: RecordedRequest) => (r.body as { model?: string }).model === 'claude-haiku-5-5';
    const { env, ws, server } = await prepare([load('mcp__t__big'), callTool('mcp__t__big', {}), say('done')], { route: (r) => (small(r) ? say('Summary: x lines') : undefined) });
    const run = await runKeel(['-p', 'go', '--mcp-config', mcpConfig({ t: testServer(ws.dir) }), '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const main = server.messageRequests().filter((r) => !small(r));
    const result = text((main[2]!.body.messages.at(-1).content as Array<{ content: unknown }>)[0]!.content);
    expect(result.length).toBeLessThan(2_000);
    // The small model summarised what was left after the per-call cap (1 000 000 bytes and the note).
    const characters = Number(/\((\d+) characters\)/.exec(result)![1]);
    expect(characters).toBeGreaterThan(1_000_000);
    expect(characters).toBeLessThan(1_000_200);
    expect(result).toContain('Summary: x lines');
    expect(server.messageRequests().filter(small)).toHaveLength(1);
  });

  it('does not start project servers in an untrusted folder', async () => {
    const { env, ws, server } = await prepare([say('done')]);
    ws.write('.mcp.json', mcpConfig({ t: testServer(ws.dir) }));
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`is not a trusted folder, so its project settings were not loaded (${ws.path('.mcp.json')})`);
    expect(existsSync(path.join(ws.home, 'logs', 'mcp'))).toBe(false);
    expect(toolNames(server.messageRequests()[0]!).some((n) => n.startsWith('mcp__'))).toBe(false);
  });

  it('names the file of a broken .mcp.json and the flag of a broken --mcp-config', async () => {
    const { env, ws } = await prepare();
    ws.write('.mcp.json', '{"mcpServers": {"a": {"command": 1}}}');
    let run = await runKeel(['-p', 'go', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`keel: ${ws.path('.mcp.json')}: mcpServers.a.command: Invalid input: expected string, received number\n`);
    ws.write('.mcp.json', '{"mcpServers": ');
    run = await runKeel(['-p', 'go', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^keel: ${ws.path('.mcp.json')}: not valid JSON`));
    rmSync(ws.path('.mcp.json'));
    run = await runKeel(['-p', 'go', '--mcp-config', '{"mcpServers": {"x": {"url": 5}}}'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('keel: --mcp-config: mcpServers.x.url: Invalid input: expected string, received number\n');
    run = await runKeel(['-p', 'go', '--mcp-config', 'missing.json'], { cwd: ws.dir, env });
    expect(run.stderr).toBe(`keel: --mcp-config: no such file: ${ws.path('missing.json')}\n`);
  });

  it('shows the servers with /mcp', async () => {
    const { env, ws } = await prepare();
    const config = mcpConfig({ t: testServer(ws.dir), gone: { command: '/nonexistent/server' } });
    const run = await runKeel(['-p', '/mcp', '--mcp-config', config], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('t  connected  stdio  12 tools\n');
    expect(run.stdout).toMatch(/gone {2}(reconnecting|failed) {2}stdio {2}0 tools {2}error: spawn \/nonexistent\/server ENOENT/);
  });
});

describe('signals', () => {
  it('kills the servers\' process groups when Keel is stopped with SIGTERM mid-call', async () => {
    const { env, ws, server } = await prepare([load('mcp__t__hang'), callTool('mcp__t__hang', {}), say('never')]);
    const pidFile = ws.path('server.pid');
    const child = spawnKeel(['-p', 'go', '--mcp-config', mcpConfig({ t: testServer(ws.dir, '--pid-file', pidFile) }), '--permission-mode', 'auto'], { cwd: ws.dir, env });
    const done = collect(child, 60_000);
    // Wait until the hanging call has been handed to the server.
    await until(() => server.messageRequests().length >= 2 && existsSync(pidFile), 'the hanging call to reach the server');
    child.kill('SIGTERM');
    const run = await done;
    expect(run.code).toBe(143);
    expect(await processesGone(ws.dir)).toEqual([]);
  });
});

describe('OAuth', () => {
  it('authorizes through the browser and the loopback redirect, stores the tokens 0600, and reuses them', async () => {
    const oauth = await startOAuthServer();
    stops.push(oauth.stop);
    const { env, ws, server } = await prepare([load('mcp__secure__whoami'), callTool('mcp__secure__whoami', {}), say('done')]);
    const browserLog = path.join(ws.home, '..', 'browser.log');
    const config = mcpConfig({ secure: { type: 'http', url: oauth.url } });
    const run = await runKeel(['-p', 'who am I?', '--mcp-config', config, '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env: { ...env, BROWSER: FAKE_BROWSER, FAKE_BROWSER_LOG: browserLog },
      timeoutMs: 60_000,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`keel: warn: MCP server secure needs authorization: open ${oauth.url.replace('/mcp', '/authorize')}?`);
    expect(readFileSync(browserLog, 'utf8')).toMatch(/redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback/);
    expect(text(resultsIn(server, 2)[0]!.content)).toBe('authorized as a registered client');
    const stored = path.join(ws.home, 'mcp-auth', 'secure.json');
    expect(statSync(stored).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(stored, 'utf8')).tokens.access_token).toEqual(expect.any(String));

    // The stored token is used: no browser and no authorization this time.
    rmSync(browserLog);
    server.push(load('mcp__secure__whoami'), callTool('mcp__secure__whoami', {}), say('done again'));
    const again = await runKeel(['-p', 'who am I?', '--mcp-config', config, '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env: { ...env, BROWSER: FAKE_BROWSER, FAKE_BROWSER_LOG: browserLog },
      timeoutMs: 60_000,
    });
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(existsSync(browserLog)).toBe(false);
    expect(text(resultsIn(server, 5)[0]!.content)).toBe('authorized as a registered client');

    // The access token expires: the refresh token gets a new one, with no browser, and the new pair is stored.
    const before = JSON.parse(readFileSync(stored, 'utf8')).tokens;
    expect(before.refresh_token).toEqual(expect.any(String));
    const base = oauth.url.replace('/mcp', '');
    await fetch(`${base}/expire-access`, { method: 'POST' });
    server.push(load('mcp__secure__whoami'), callTool('mcp__secure__whoami', {}), say('refreshed'));
    const refreshed = await runKeel(['-p', 'who am I?', '--mcp-config', config, '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env: { ...env, BROWSER: FAKE_BROWSER, FAKE_BROWSER_LOG: browserLog },
      timeoutMs: 60_000,
    });
    expect(refreshed.code).toBe(0);
    expect(refreshed.stderr).toBe('');
    expect(existsSync(browserLog)).toBe(false);
    expect(text(resultsIn(server, 8)[0]!.content)).toBe('authorized as a registered client');
    expect(await (await fetch(`${base}/grants`)).json()).toEqual(['authorization_code', 'refresh_token']);
    const after = JSON.parse(readFileSync(stored, 'utf8')).tokens;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(statSync(stored).mode & 0o777).toBe(0o600);
  }, 120_000);
});
