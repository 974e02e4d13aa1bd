/**
 * MCP servers that fail their first start are never invisible: the failure is said at once on stderr, a
 * `tool_search` waits a few seconds for a server that is retrying and otherwise names it and why; a start-up
 * banner on stdout is skipped; a server flooding stderr cannot fill the disk (its log is capped and rotated).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { processesGone, startEverythingHttp } from '../helpers/mcp.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

const FAULTY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp-faulty.mjs');
const faulty = (...args: string[]) => ({ command: process.execPath, args: [FAULTY, ...args] });
const mcpConfig = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers });
const load = (...names: string[]) => callTool('tool_search', { query: `select:${names.join(',')}` }, 'search');

/** The text of the tool_result with this id, from the requests the model received. */
function result(server: ScriptedServer, id: string): { text: string; isError?: boolean } {
  for (const request of server.messageRequests()) {
    for (const message of request.body.messages ?? []) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content) {
        if (block.type === 'tool_result' && block.tool_use_id === id) {
          const text = typeof block.content === 'string' ? block.content : (block.content as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n');
          return { text, isError: block.is_error };
        }
      }
    }
  }
  throw new Error(`no tool_result ${id}`);
}

/** A proxy in front of an MCP HTTP server that answers the first `failures` requests with 500. */
async function failingFirst(target: string, failures: number): Promise<{ url: string; stop(): Promise<void> }> {
  let seen = 0;
  const upstream = new URL(target);
  const proxy = http.createServer((req, res) => {
    if (seen++ < failures) {
      req.resume();
      res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream database is down');
      return;
    }
    const forward = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    stop: () => new Promise<void>((resolve) => {
      proxy.closeAllConnections();
      proxy.close(() => resolve());
    }),
  };
}

describe('a server that fails its first start', () => {
  it('exits at start: said at once on stderr with its last stderr line, and named with the cause in the search answer', async () => {
    const { env, ws, server } = await prepare([load('mcp__bad__ping'), say('done')]);
    const run = await runKeel(['-p', 'go', '--mcp-config', mcpConfig({ bad: faulty('--exit-at-start') }), '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env: { ...env, MCP_SEARCH_WAIT: '1500' },
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('MCP server bad failed to start: the server exited (code 7); its last line on stderr: faulty: cannot open my database; retrying');
    const search = result(server, 'search');
    expect(search.text).toContain('MCP server bad is not connected (it is retrying: the server exited (code 7); its last line on stderr: faulty: cannot open my database)');
    expect(search.text).toContain(path.join(ws.home, 'logs', 'mcp', 'bad.log'));
    expect(await processesGone(FAULTY)).toEqual([]);
  }, 90_000);

  it('fails once: the failure is said, and the search waits for the retry and finds the tool', async () => {
    const { env, ws, server } = await prepare([load('mcp__flaky__ping'), callTool('mcp__flaky__ping', {}, 'ping'), say('done')]);
    const once = ws.path('failed-once');
    const run = await runKeel(['-p', 'go', '--mcp-config', mcpConfig({ flaky: faulty('--fail-first', once) }), '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(once)).toBe(true);
    expect(run.stderr).toContain('MCP server flaky failed to start: the server exited (code 7); its last line on stderr: faulty: first start fails; retrying');
    expect(result(server, 'search').text).not.toContain('MCP server flaky');
    expect(result(server, 'ping')).toEqual({ text: 'pong', isError: undefined });
  }, 90_000);

  it('prints a banner on stdout: the banner is skipped (and noted in its log) and the server works', async () => {
    const { env, ws, server } = await prepare([load('mcp__chatty__ping'), callTool('mcp__chatty__ping', {}, 'ping'), say('done')]);
    const run = await runKeel(['-p', 'go', '--mcp-config', mcpConfig({ chatty: faulty('--banner') }), '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(result(server, 'ping')).toEqual({ text: 'pong', isError: undefined });
    const log = readFileSync(path.join(ws.home, 'logs', 'mcp', 'chatty.log'), 'utf8');
    expect(log.match(/skipped a line on stdout that is not JSON-RPC/g)).toHaveLength(2);
  }, 90_000);

  it('answers 500 to the first initialize over HTTP: the failure is said, and the retry connects before the search answers', async () => {
    const everything = await startEverythingHttp();
    stops.push(everything.stop);
    const proxy = await failingFirst(everything.url, 1);
    stops.push(proxy.stop);
    const { env, ws, server } = await prepare([load('mcp__remote__get-sum'), callTool('mcp__remote__get-sum', { a: 2, b: 40 }, 'sum'), say('done')]);
    const run = await runKeel(['-p', 'go', '--mcp-config', mcpConfig({ remote: { type: 'http', url: proxy.url } }), '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/MCP server remote failed to start: .*500.*; retrying/);
    expect(result(server, 'sum').text).toContain('42');
  }, 90_000);

  it('answers 500 to every request over HTTP: the search names the server and the HTTP error', async () => {
    const everything = await startEverythingHttp();
    stops.push(everything.stop);
    const proxy = await failingFirst(everything.url, Number.MAX_SAFE_INTEGER);
    stops.push(proxy.stop);
    const { env, ws, server } = await prepare([load('mcp__remote__get-sum'), say('done')]);
    const run = await runKeel(['-p', 'go', '--mcp-config', mcpConfig({ remote: { type: 'http', url: proxy.url } }), '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env: { ...env, MCP_SEARCH_WAIT: '1000' },
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(result(server, 'search').text).toMatch(/MCP server remote is not connected \(it is retrying: .*500.*\); its tools are not available yet/);
  }, 90_000);
});

describe("a server's stderr", () => {
  it('a flood of 40 MB stays under the cap: one rotation, then lines are dropped with a note, and the server is not blocked', async () => {
    const { env, ws, server } = await prepare([load('mcp__loud__ping'), callTool('mcp__loud__ping', {}, 'ping'), say('done')]);
    const cap = 10 * 1024 * 1024;
    const run = await runKeel(['-p', 'go', '--mcp-config', mcpConfig({ loud: faulty('--flood-bytes', String(40 * 1024 * 1024)) }), '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(result(server, 'ping')).toEqual({ text: 'pong', isError: undefined });
    const log = path.join(ws.home, 'logs', 'mcp', 'loud.log');
    // Keel's own notes may pass the cap by their few bytes.
    expect(statSync(log).size).toBeLessThan(cap + 4096);
    expect(statSync(`${log}.1`).size).toBeLessThan(cap + 4096);
    const text = readFileSync(log, 'utf8');
    expect(text).toContain(`log rotated: it reached ${cap} bytes; the earlier part is in ${log}.1`);
    expect(text).toContain(`the server writes more than ${cap} bytes a minute to stderr; dropping its output until the next rotation`);
    expect(readFileSync(`${log}.1`, 'utf8')).toContain('flood line 0000000000');
  }, 120_000);
});
