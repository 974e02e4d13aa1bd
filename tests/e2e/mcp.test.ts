import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest, type ScriptedServer } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { runKeel } from '../helpers/cli.js';
import { EVERYTHING, FILESYSTEM, processesGone, startEverythingHttp, testServer } from '../helpers/mcp.js';

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
    run = await runKeel(['mcp', 'list'], { cwd: ws.dir, env, timeoutMs: 30_000 });
    expect(run.stdout).toContain('files  connected  stdio  14 tools\n');
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
  }, 60_000);
});
