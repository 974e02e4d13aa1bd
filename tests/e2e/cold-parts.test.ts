/**
 * The plugins' cold parts (plugins/<name>/cold.ts: the code a feature runs only when it is used) are bundles of their
 * own in dist/bin/cold/, loaded on first use: neither keel.cjs nor the start-up snapshot holds them, `keel -p` and the
 * edit session load none, and each feature loads its own and works, started from the snapshot and without it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KEEL_NODE_FLAGS, KEEL_SNAPSHOT_FLAGS } from '../../scripts/node-flags.mjs';
import { callTool, say, type RecordedRequest } from '../helpers/anthropic-server.js';
import { cleanEnv, collect, KEEL_BIN, ndjson, runKeel, type KeelRun } from '../helpers/cli.js';
import { startOpenAIServer } from '../helpers/openai-server.js';
import { startTinyproxy } from '../helpers/proxy.js';
import { startRedis } from '../helpers/redis.js';
import { useScriptedProjects } from '../helpers/project.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';
import { makeWorkspace } from '../helpers/workspace.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(root, 'dist', 'bin');
const TRACE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/trace-reads.cjs');
const prepare = useScriptedProjects();

/** Text each cold part's code holds (a message or a description) and its plugin's warm part does not. */
const MARKERS: Record<string, string> = {
  'custom-commands': 'commands do not run (keel trust makes it trusted)',
  acp: 'open it with session/new or session/load first',
  'claude-commands': 'Act as a careful senior reviewer',
  inspect: 'without the start-up snapshot, so start-up is slower',
  'mcp-bridge': 'connect to every configured server and show its status',
  network: 'refused the tunnel to',
  'query-bedrock': 'AWS_DEFAULT_REGION',
  'query-openai': 'the OpenAI-compatible server refused the request',
  'query-vertex': 'Google Vertex AI needs a region',
  sdk: 'unknown control request subtype',
  'status-line': 'its input could not be built',
  telemetry: 'Lines of code added and removed by the file tools',
  'tool-agent': 'ended without a result',
  'tool-documents': 'is not a readable PDF',
  'ui-plain': 'Ctrl+R searches it as you type',
  fleet: 'one JSON object a line, with the full result and the patch',
  'session-store-redis': 'No sessions in Redis yet.',
};

type Start = 'from the snapshot' | 'without the snapshot';
const STARTS: Start[] = ['from the snapshot', 'without the snapshot'];

/**
 * Runs `keel` with every file it reads whole traced: as Node started from the snapshot (the launcher's command line
 * with the trace preloaded), or through the launcher with NODE_OPTIONS set, which starts it without the snapshot.
 * Returns the run and the cold bundles it (and any sub-agent traced with it) read, by plugin name.
 */
async function traced(start: Start, args: string[], opts: { cwd: string; env: Record<string, string | undefined>; input?: string; timeoutMs?: number }): Promise<KeelRun & { cold: string[]; reads: string[] }> {
  const file = path.join(opts.cwd, `.reads-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, '');
  let run: KeelRun;
  if (start === 'from the snapshot') {
    const child = spawn(process.execPath, [...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '--snapshot-blob', path.join(BIN, 'keel.blob'), '-r', TRACE, KEEL_BIN, ...args], {
      cwd: opts.cwd,
      env: cleanEnv({ ...opts.env, TRACE_READS_FILE: file }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin!.end(opts.input ?? '');
    run = await collect(child, opts.timeoutMs);
  } else {
    run = await runKeel(args, { cwd: opts.cwd, env: { ...opts.env, NODE_OPTIONS: `--require=${TRACE}`, TRACE_READS_FILE: file }, input: opts.input, timeoutMs: opts.timeoutMs });
  }
  const reads = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const cold = [...new Set(reads.filter((f) => f.startsWith(path.join(BIN, 'cold') + path.sep)).map((f) => path.basename(f, '.cjs')))].sort();
  return { ...run, cold, reads };
}

/** The last tool result of a request. */
function lastResult(request: RecordedRequest): { content: unknown; is_error?: boolean } {
  const messages = request.body.messages as Array<{ content: Array<{ type: string; content: unknown; is_error?: boolean }> }>;
  return messages[messages.length - 1].content.find((b) => b.type === 'tool_result')!;
}

describe('the plugins’ cold parts', () => {
  it('are bundles of their own in dist/bin/cold, which neither keel.cjs nor the start-up snapshot holds', () => {
    const plugins = readdirSync(path.join(root, 'plugins')).filter((name) => existsSync(path.join(root, 'plugins', name, 'cold.ts')));
    expect(plugins.sort()).toEqual(Object.keys(MARKERS).sort());
    const cli = readFileSync(path.join(BIN, 'keel.cjs'), 'utf8');
    const blob = readFileSync(path.join(BIN, 'keel.blob'));
    for (const [plugin, marker] of Object.entries(MARKERS)) {
      expect(readFileSync(path.join(BIN, 'cold', `${plugin}.cjs`), 'utf8'), plugin).toContain(marker);
      expect(cli.includes(marker), `keel.cjs holds ${plugin}'s cold code`).toBe(false);
      expect(blob.includes(marker), `the snapshot holds ${plugin}'s cold code`).toBe(false);
    }
    // Not vacuous: the plugins' warm parts (their names, modes and sub-commands) are in both.
    expect(cli).toContain('interactive:plain');
    expect(blob.includes('interactive:plain')).toBe(true);
  });

  for (const start of STARTS) {
    describe(start, () => {
      it('keel -p and the edit session (read_file, edit_file, bash) load none', async () => {
        const { env, ws, server } = await prepare([
          say('one turn'),
          callTool('read_file', { path: 'a.txt' }),
          callTool('edit_file', { path: 'a.txt', old_string: 'hello', new_string: 'goodbye' }),
          callTool('bash', { command: 'cat a.txt' }),
          say('edited'),
        ]);
        ws.write('a.txt', 'hello world\n');
        const one = await traced(start, ['-p', 'hi'], { cwd: ws.dir, env });
        expect(one.stdout).toBe('one turn\n');
        expect(one.cold).toEqual([]);
        // Nor BullMQ or the Redis client (the fleet plugin is in the default preset; its code is cold).
        expect(one.reads.filter((file) => /vendor\/(bullmq|ioredis)\.cjs$/.test(file))).toEqual([]);
        const edit = await traced(start, ['-p', 'edit a.txt', '--permission-mode', 'auto'], { cwd: ws.dir, env });
        expect(edit.stdout).toBe('edited\n');
        expect(edit.cold).toEqual([]);
        expect(JSON.stringify(lastResult(server.messageRequests()[4]).content)).toContain('goodbye world');
      });

      it('a proxy variable or a client certificate loads network’s, and keel -p through the proxy works', async () => {
        const tiny = await startTinyproxy();
        try {
          const { env, ws } = await prepare([say('proxied'), say('with a certificate')]);
          const proxied = await traced(start, ['-p', 'hi'], { cwd: ws.dir, env: { ...env, HTTP_PROXY: tiny.url() } });
          expect(proxied.stdout).toBe('proxied\n');
          expect(proxied.cold).toEqual(['network']);
          expect(tiny.requests()).toHaveLength(1);
          // A client certificate that is set loads the part too (plain http presents none, so it is not read here).
          ws.write('c.pem', 'not a certificate');
          const cert = await traced(start, ['-p', 'hi'], { cwd: ws.dir, env: { ...env, CLAUDE_CODE_CLIENT_CERT: ws.path('c.pem') } });
          expect(cert.stdout).toBe('with a certificate\n');
          expect(cert.cold).toEqual(['network']);
        } finally {
          await tiny.stop();
        }
      });

      it('a fleet-worker run loads session-store-redis’s and the Redis client, never the fleet’s commands or BullMQ', async () => {
        const redis = await startRedis();
        try {
          const { env, ws } = await prepare([say('stored in redis')]);
          const run = await traced(start, ['-p', 'hi', '--preset', 'fleet-worker'], { cwd: ws.dir, env: { ...env, KEEL_REDIS_URL: redis.url } });
          expect(run.stdout, run.stderr).toBe('stored in redis\n');
          expect(run.cold).toEqual(['session-store-redis']);
          expect(run.reads.filter((file) => /vendor\/(bullmq|ioredis)\.cjs$/.test(file)).map((file) => path.basename(file))).toEqual(['ioredis.cjs']);
        } finally {
          await redis.cleanup();
        }
      });

      it('keel doctor, config, plugins and init load inspect’s', async () => {
        const { env, ws } = await prepare([]);
        const doctor = await traced(start, ['doctor'], { cwd: ws.dir, env });
        expect(doctor.stdout).toMatch(start === 'from the snapshot' ? /ok\s+start-up\s+from the start-up snapshot/ : /warn\s+start-up\s+without the start-up snapshot/);
        // The network plugin's doctor lines (the proxy for the API's host) are in its cold part.
        expect(doctor.cold).toEqual(['inspect', 'network']);
        const plugins = await traced(start, ['plugins'], { cwd: ws.dir, env });
        expect(plugins.stdout).toMatch(/^ui-plain\s+-\s+preset default$/m);
        expect(plugins.cold).toEqual(['inspect']);
        const init = await traced(start, ['init'], { cwd: ws.dir, env });
        expect(init.code, init.stderr).toBe(0);
        expect(existsSync(ws.path('agent.config.ts'))).toBe(true);
        const config = await traced(start, ['config', '--json'], { cwd: ws.dir, env });
        expect(config.code, config.stderr).toBe(0);
        expect(JSON.parse(config.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'model' })]));
        expect(config.cold).toEqual(['inspect']);
      });

      it('keel mcp loads mcp-bridge’s', async () => {
        const { env, ws } = await prepare([]);
        const add = await traced(start, ['mcp', 'add', '--scope', 'user', 'files', 'node', 'server.js'], { cwd: ws.dir, env });
        expect(add.code, add.stderr).toBe(0);
        expect(add.cold).toEqual(['mcp-bridge']);
        // Adding a server needs neither the bridge nor the MCP SDK; `get` connects to it, with both.
        const sdk = (reads: string[]) => reads.filter((f) => f.endsWith(`${path.sep}vendor${path.sep}mcp.cjs`));
        expect(sdk(add.reads)).toEqual([]);
        const get = await traced(start, ['mcp', 'get', 'files'], { cwd: ws.dir, env });
        expect(get.stdout).toContain('server.js');
        expect(get.cold).toEqual(['mcp-bridge']);
        expect(sdk(get.reads)).toHaveLength(1);
      });

      it('SDK mode loads sdk’s', async () => {
        const { env, ws } = await prepare([say('over the protocol')]);
        const input = `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'hi' } })}\n`;
        const run = await traced(start, ['--input-format', 'stream-json', '--output-format', 'stream-json'], { cwd: ws.dir, env, input });
        expect(run.code, run.stderr).toBe(0);
        expect(ndjson(run.stdout).at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'over the protocol' });
        expect(run.cold).toEqual(['sdk']);
      });

      it('keel acp loads acp’s', async () => {
        const { env, ws } = await prepare([]);
        const input = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;
        const run = await traced(start, ['acp'], { cwd: ws.dir, env, input });
        expect(run.code, run.stderr).toBe(0);
        expect(ndjson(run.stdout)).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ protocolVersion: 1 }) })]);
        expect(run.cold).toEqual(['acp']);
      });

      it('the agent tool loads tool-agent’s, and its sub-agent sdk’s', async () => {
        const route = (request: RecordedRequest) => {
          const messages = request.body.messages as Array<{ role: string; content: unknown }>;
          if (JSON.stringify(messages[0].content).includes('CHILD')) return say('child answer');
          return messages.length === 1 ? callTool('agent', { task: 'CHILD say something' }, 'toolu_child') : say('parent done');
        };
        const { env, ws, server } = await prepare([], { route });
        const run = await traced(start, ['-p', 'delegate', '--allowedTools', 'Task'], { cwd: ws.dir, env, timeoutMs: 60_000 });
        expect(run.stderr).toBe('');
        expect(run.stdout).toBe('parent done\n');
        const final = server.messageRequests().find((r) => (r.body.messages as unknown[]).length === 3)!;
        expect(lastResult(final)).toMatchObject({ content: 'child answer' });
        expect(run.cold).toContain('tool-agent');
        // A sub-agent started without the snapshot inherits the trace (NODE_OPTIONS), and loads the sub-agent mode.
        expect(run.cold).toEqual(start === 'without the snapshot' ? ['sdk', 'tool-agent'] : ['tool-agent']);
      });

      it('read_file on a notebook loads tool-documents’', async () => {
        const { env, ws, server } = await prepare([callTool('read_file', { path: 'n.ipynb' }), say('read')]);
        ws.write('n.ipynb', JSON.stringify({ cells: [{ cell_type: 'code', id: 'c1', metadata: {}, execution_count: 1, source: ['print(7)'], outputs: [] }], metadata: {}, nbformat: 4, nbformat_minor: 5 }));
        const run = await traced(start, ['-p', 'read it'], { cwd: ws.dir, env });
        expect(run.stdout).toBe('read\n');
        expect(JSON.stringify(lastResult(server.messageRequests()[1]).content)).toContain('--- cell 1 (code) id=c1 [1] ---');
        expect(run.cold).toEqual(['tool-documents']);
      });

      it("provider 'openai' loads query-openai’s", async () => {
        const server = await startOpenAIServer([{ text: 'from chat completions' }]);
        const ws = makeWorkspace({ git: true });
        try {
          ws.write('agent.config.json', JSON.stringify({ provider: 'openai', baseURL: server.url, apiKey: 'sk-local', model: 'gpt-4o-mini', smallModel: 'gpt-4o-mini' }));
          const run = await traced(start, ['-p', 'hi', '--trust'], { cwd: ws.dir, env: { KEEL_HOME: ws.home } });
          expect(run.stderr).toBe('');
          expect(run.stdout).toBe('from chat completions\n');
          expect(run.cold).toEqual(['query-openai']);
        } finally {
          await server.close();
          ws.cleanup();
        }
      });
    });
  }

  describe('the plain UI', () => {
    const fixture = terminalFixture();

    it.skipIf(!hasTmux)('loads ui-plain’s when it starts', async () => {
      const { env, ws } = await prepare([]);
      const file = ws.path('plain.reads');
      writeFileSync(file, '');
      const term = fixture.terminal({ ws, args: ['--ui', 'plain'], env: { ...env, NODE_OPTIONS: `--require=${TRACE}`, TRACE_READS_FILE: file } });
      await term.waitFor(/Ctrl\+D to exit/);
      const cold = readFileSync(file, 'utf8').split('\n').filter((f) => f.startsWith(path.join(BIN, 'cold') + path.sep));
      expect(cold.map((f) => path.basename(f))).toEqual(['ui-plain.cjs']);
    });
  });
});
