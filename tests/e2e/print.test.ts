import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiKeyOf, callTool, plainMessages, say } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { collect, ndjson, runKeel, spawnKeel } from '../helpers/cli.js';
import { until } from '../helpers/until.js';

const prepare = useScriptedProjects();

describe('keel -p (headless)', () => {
  it('prints the scripted answer as text', async () => {
    const { env, ws, server } = await prepare([say('Hello from the scripted model.')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('Hello from the scripted model.\n');
    expect(run.code).toBe(0);
    const request = server.messageRequests()[0];
    expect(plainMessages(request.body.messages)).toEqual([{ role: 'user', content: 'hi' }]);
    expect(apiKeyOf(request)).toBe('test-key');
    expect(request.body.stream).toBe(true);
  });

  it('prints one result object with --output-format json', async () => {
    const { env, ws } = await prepare([say('forty-two', { usage: { input_tokens: 12, output_tokens: 3 } })]);
    const run = await runKeel(['-p', 'answer?', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'forty-two',
      num_turns: 1,
      session_id: expect.any(String),
      total_cost_usd: expect.any(Number),
      duration_ms: expect.any(Number),
      duration_api_ms: expect.any(Number),
      usage: expect.objectContaining({ input_tokens: 12, output_tokens: 3 }),
      permission_denials: [],
    });
  });

  it('prints NDJSON messages in Claude Code shapes with --output-format stream-json', async () => {
    const { env, ws } = await prepare([say('streamed')]);
    const run = await runKeel(['-p', 'go', '--output-format', 'stream-json', '--model', 'claude-test-model'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const lines = ndjson(run.stdout);
    expect(lines[0]).toMatchObject({ type: 'system', subtype: 'init', cwd: ws.dir, model: 'claude-test-model', tools: expect.any(Array), permissionMode: 'ask' });
    const sessionId = lines[0].session_id;
    expect(lines[1]).toMatchObject({
      type: 'assistant',
      session_id: sessionId,
      parent_tool_use_id: null,
      message: { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'streamed' }], stop_reason: 'end_turn' },
    });
    expect(lines[lines.length - 1]).toMatchObject({ type: 'result', subtype: 'success', result: 'streamed', session_id: sessionId });
  });

  it('reports error_max_turns distinctly', async () => {
    const { env, ws } = await prepare([
      { content: [{ type: 'tool_use', name: 'no_such_tool', input: {} }] },
      { content: [{ type: 'tool_use', name: 'no_such_tool', input: {} }] },
    ]);
    const run = await runKeel(['-p', 'loop', '--max-turns', '1', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ subtype: 'error_max_turns', is_error: true, num_turns: 1 });
  });

  it('works with --preset minimal', async () => {
    const { env, ws } = await prepare([say('minimal works')]);
    const run = await runKeel(['--preset', 'minimal', '-p', 'hi'], { cwd: ws.dir, env });
    expect(run.stdout).toBe('minimal works\n');
    expect(run.code).toBe(0);
  });
});

describe('pipe mode', () => {
  it('reads the prompt from stdin', async () => {
    const { env, ws, server } = await prepare([say('piped ok')]);
    const run = await runKeel([], { cwd: ws.dir, env, input: 'summarise this\n' });
    expect(run.stdout).toBe('piped ok\n');
    expect(plainMessages(server.messageRequests()[0].body.messages)[0].content).toBe('summarise this');
  });

  it('appends stdin to the -p prompt', async () => {
    const { env, ws, server } = await prepare([say('ok')]);
    await runKeel(['-p', 'explain this log:'], { cwd: ws.dir, env, input: 'ERROR disk full' });
    expect(plainMessages(server.messageRequests()[0].body.messages)[0].content).toBe('explain this log:\n\nERROR disk full');
  });
});

describe('failures are one line with the right exit code', () => {
  it('no API key', async () => {
    const { ws } = await prepare([]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { KEEL_HOME: ws.home } });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('keel: no API key: set ANTHROPIC_API_KEY or run keel login\n');
  });

  it('an API key stored by keel login in KEEL_HOME is used', async () => {
    const { ws, server } = await prepare([say('authed')]);
    const login = await runKeel(['login'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, ANTHROPIC_BASE_URL: server.url }, input: 'sk-stored\n' });
    expect(login.code).toBe(0);
    const mode = execFileSync('stat', ['-c', '%a', `${ws.home}/auth.json`]).toString().trim();
    expect(mode).toBe('600');
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, ANTHROPIC_BASE_URL: server.url } });
    expect(run.stdout).toBe('authed\n');
    expect(apiKeyOf(server.messageRequests()[0])).toBe('sk-stored');
  });

  it('keel login refuses a key the API rejects and stores nothing', async () => {
    const { server, ws } = await prepare([], { rejectKeys: ['sk-bad'] });
    const login = await runKeel(['login'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, ANTHROPIC_BASE_URL: server.url }, input: 'sk-bad\n' });
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/^keel: login: the key was refused: 401/);
    expect(existsSync(`${ws.home}/auth.json`)).toBe(false);
  });

  it('an invalid API key (401)', async () => {
    const { env, ws } = await prepare([{ status: 401, errorMessage: 'invalid x-api-key' }]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^keel: invalid API key/);
  });

  it('-p with no prompt and nothing on stdin', async () => {
    const { env, ws } = await prepare([]);
    const run = await runKeel(['-p'], { cwd: ws.dir, env, input: '' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('keel: no prompt: pass one after -p or pipe it on stdin\n');
  });

  it('an unknown preset', async () => {
    const { env, ws } = await prepare([]);
    const run = await runKeel(['--preset', 'turbo', '-p', 'hi'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^keel: --preset: unknown preset "turbo" \(known presets: default, headless, minimal, policy-strict, fleet-worker\), and no package "turbo" is installed \(looked in [^\n]*\)\n$/);
  });

  it('a bad config', async () => {
    const { env, ws } = await prepare([]);
    const file = ws.write('agent.config.ts', `export default { maxTurns: 'ten' };`);
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`keel: ${file}: maxTurns: Invalid input: expected number, received string\n`);
  });

  it('an unknown flag', async () => {
    const { env, ws } = await prepare([]);
    const run = await runKeel(['--frobnicate'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown option '--frobnicate'/);
  });

  it('--version and --help', async () => {
    const { env, ws } = await prepare([]);
    const version = await runKeel(['--version'], { cwd: ws.dir, env });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = await runKeel(['--help'], { cwd: ws.dir, env });
    expect(help.code).toBe(0);
    for (const flag of ['--print', '--output-format', '--resume', '--continue', '--permission-mode', '--model', '--max-turns', '--preset', '--config']) {
      expect(help.stdout).toContain(flag);
    }
  });
});

describe('project config', () => {
  it("a plugin in the project's agent.config.ts changes the system prompt the model receives", async () => {
    const { env, ws, server } = await prepare([say('configured')]);
    ws.write(
      'agent.config.ts',
      `import { defineConfig, definePlugin, Stage } from 'keel';
const house = definePlugin((opts: { rule: string }) => ({
  name: 'house-rules',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.hooks.contextLoad.tapPromise({ name: 'house-rules', stage: Stage.LATE }, async (context) => ({
      ...context,
      system: [...context.system, { type: 'text', text: 'House rule: ' + opts.rule }],
    }));
  },
}));
export default defineConfig({ plugins: [house({ rule: 'tabs, never spaces' })] });`,
    );
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const system = server.messageRequests()[0].body.system as Array<{ text: string }>;
    expect(system.map((b) => b.text)).toContain('House rule: tabs, never spaces');
  });
});

describe('diagnostics', () => {
  it('--verbose logs plugin diagnostics, including when the session became ready', async () => {
    const { env, ws } = await prepare([say('fine')]);
    const run = await runKeel(['-p', 'hi', '--verbose'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('fine\n');
    expect(run.stderr).toMatch(/^\[debug\] kernel: session [0-9a-f-]{36} ready with 0 messages, \d+ ms after process start$/m);
  });

  it('warnings logged while the session starts reach stderr', async () => {
    const { env, ws } = await prepare([say('fine')]);
    ws.write(
      'agent.config.ts',
      `import { definePlugin } from 'keel';
const early = definePlugin(() => ({
  name: 'early-warning',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.hooks.sessionStart.tapPromise('early-warning', async () => kernel.log('warn', 'the index is stale', 'early-warning'));
  },
}));
export default { plugins: [early()] };`,
    );
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('keel: warn: the index is stale\n');
    expect(run.stdout).toBe('fine\n');
  });
});

describe('SIGINT', () => {
  it('stops a streaming run with exit 130 and leaves no process behind', async () => {
    const { env, ws, server } = await prepare([say('a slow answer that will be interrupted part way through', { eventDelayMs: 300 })]);
    const child = spawnKeel(['-p', 'talk slowly', '--output-format', 'stream-json'], { cwd: ws.dir, env });
    const done = collect(child);
    // Wait until the model request is in flight, then interrupt.
    await until(() => server.messageRequests().length > 0, 'the model request');
    expect(server.messageRequests()).toHaveLength(1);
    child.kill('SIGINT');
    const run = await done;
    expect(run.code).toBe(130);
    const result = ndjson(run.stdout).find((l) => l.type === 'result');
    expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true });
    expect(() => process.kill(child.pid!, 0)).toThrow();
  });

  it('SIGTERM stops a run the same way, exiting 143', async () => {
    const { env, ws, server } = await prepare([say('a slow answer that will be terminated part way through', { eventDelayMs: 300 })]);
    const child = spawnKeel(['-p', 'talk slowly'], { cwd: ws.dir, env });
    const done = collect(child);
    await until(() => server.messageRequests().length > 0, 'the model request');
    child.kill('SIGTERM');
    const run = await done;
    expect(run.code).toBe(143);
  });

  it('kills a running shell command and its children, then exits 130', async () => {
    // Longer than the wait below for it to be gone: a command that survived cannot end by itself in time.
    const marker = `sleep ${(300 + Math.random()).toFixed(6)}`;
    const { env, ws } = await prepare([callTool('bash', { command: `${marker} & wait` }, 'toolu_sleep'), say('never reached')]);
    const child = spawnKeel(['-p', 'wait a while', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    const done = collect(child);
    const running = () => spawnSync('pgrep', ['-f', marker]).status === 0;
    await until(running, 'the shell command to run');
    child.kill('SIGINT');
    const run = await done;
    expect(run.code).toBe(130);
    await until(() => !running(), 'the shell command to be gone', { timeoutMs: 20_000 });
  });
});
