/**
 * The query engine through the built CLI: visible retries in stream-json, total_cost_usd in json output,
 * and a whole edit-and-run session against an OpenAI-compatible Chat Completions server.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { say, startAnthropicServer, type ScriptStep } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { startOpenAIServer, type ChatStep } from '../helpers/openai-server.js';
import { freePort } from '../helpers/mcp.js';
import { makeWorkspace } from '../helpers/workspace.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A project whose agent.config.ts makes retry waits 1 ms (the CLI cannot take an injected clock). */
async function anthropicProject(script: ScriptStep[], config = 'retry: { baseDelayMs: 1 }') {
  const server = await startAnthropicServer(script);
  const ws = makeWorkspace({ git: true });
  cleanups.push(() => ws.cleanup(), () => server.close());
  ws.write('agent.config.ts', `export default { ${config} };\n`);
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: ws.home };
  return { server, ws, env, args: ['--config', 'agent.config.ts'] };
}

describe('keel query engine (built CLI)', () => {
  it('--model resolves Claude Code\'s aliases: sonnet is sent as its id, opus[1m] as the id with the 1M-context beta', async () => {
    const { server, ws, env, args } = await anthropicProject([say('one'), say('two')]);
    expect((await runKeel(['-p', 'hi', '--model', 'sonnet', ...args], { cwd: ws.dir, env })).code).toBe(0);
    expect((await runKeel(['-p', 'hi', '--model', 'opus[1m]', '--output-format', 'json', ...args], { cwd: ws.dir, env })).code).toBe(0);
    const [first, second] = server.messageRequests();
    expect(first!.body.model).toBe('claude-sonnet-5-5');
    expect(first!.headers['anthropic-beta'] ?? '').not.toContain('context-1m');
    expect(second!.body.model).toBe('claude-opus-4-6');
    expect(second!.headers['anthropic-beta']).toContain('context-1m-2025-08-07');
  });

  it('a refused connection names the URL it tried', async () => {
    const ws = makeWorkspace({ git: true });
    cleanups.push(() => ws.cleanup());
    ws.write('agent.config.ts', 'export default { retry: { baseDelayMs: 1 } };\n');
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await runKeel(['-p', 'hello', '--config', 'agent.config.ts'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: ws.home } });
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim()).toBe(`keel: Anthropic API: connection error: ECONNREFUSED (${url}) (gave up after 3 retries)`);
  });

  it('shows two retries in stream-json when the API answers 529 twice, then prints the answer', async () => {
    const { server, ws, env, args } = await anthropicProject([{ status: 529 }, { status: 529 }, say('steady now')]);
    const run = await runKeel(['-p', 'hello', '--output-format', 'stream-json', ...args], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = ndjson(run.stdout);
    const retries = lines.filter((l) => l.type === 'system' && l.subtype === 'api_retry');
    expect(retries.map((r) => [r.attempt, r.max_retries, r.retry_delay_ms])).toEqual([
      [1, 3, 1],
      [2, 3, 2],
    ]);
    expect(retries[0].error).toContain('HTTP 529 overloaded_error');
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'steady now' });
    expect(server.messageRequests()).toHaveLength(3);
  });

  it('prints the answer in text mode after retries, and fails with one clear line when they run out', async () => {
    const ok = await anthropicProject([{ status: 503 }, say('text answer')]);
    const run = await runKeel(['-p', 'hello', ...ok.args], { cwd: ok.ws.dir, env: ok.env });
    expect(run).toMatchObject({ code: 0, stdout: 'text answer\n' });

    const bad = await anthropicProject([{ status: 529 }, { status: 529 }, { status: 529 }, { status: 529 }]);
    const failed = await runKeel(['-p', 'hello', ...bad.args], { cwd: bad.ws.dir, env: bad.env });
    expect(failed.code).toBe(1);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).toContain('HTTP 529 overloaded_error');
    expect(failed.stderr).toContain('gave up after 3 retries');
  });

  it('reports total_cost_usd from the pricing table in --output-format json', async () => {
    const usage1 = { input_tokens: 1200, output_tokens: 300, cache_creation_input_tokens: 4000, cache_read_input_tokens: 0 };
    const usage2 = { input_tokens: 50, output_tokens: 80, cache_creation_input_tokens: 100, cache_read_input_tokens: 4000 };
    const { ws, env, args } = await anthropicProject(
      [
        { content: [{ type: 'tool_use', name: 'read_file', input: { path: 'notes.txt' } }], usage: usage1 },
        say('The notes say hi.', { usage: usage2 }),
      ],
      "retry: { baseDelayMs: 1 }, model: 'claude-sonnet-4-5', pricing: { 'claude-sonnet-4-5': { input: 3, output: 15 } }",
    );
    ws.write('notes.txt', 'hi\n');
    const run = await runKeel(['-p', 'read notes.txt', '--output-format', 'json', '--permission-mode', 'auto', ...args], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    const cost = (u: typeof usage1) => (u.input_tokens * 3 + u.output_tokens * 15 + u.cache_creation_input_tokens * 3.75 + u.cache_read_input_tokens * 0.3) / 1e6;
    expect(result.result).toBe('The notes say hi.');
    expect(result.num_turns).toBe(2);
    expect(result.total_cost_usd).toBeCloseTo(cost(usage1) + cost(usage2), 12);
    expect(result.usage).toEqual({ input_tokens: 1250, output_tokens: 380, cache_creation_input_tokens: 4100, cache_read_input_tokens: 4000 });
  });

  it("runs an edit-and-run session with provider: 'openai' against a Chat Completions server", async () => {
    const script: ChatStep[] = [
      { text: 'I will write the script.', toolCalls: [{ id: 'call_w', name: 'write_file', arguments: { path: 'hello.js', content: "console.log('hello from keel')\n" } }] },
      { toolCalls: [{ id: 'call_r', name: 'bash', arguments: { command: 'node hello.js' } }] },
      { text: 'It printed: hello from keel', usage: { prompt_tokens: 900, completion_tokens: 20, cached_tokens: 0 } },
    ];
    const server = await startOpenAIServer(script);
    const ws = makeWorkspace({ git: true });
    cleanups.push(() => ws.cleanup(), () => server.close());
    ws.write(
      'agent.config.ts',
      `export default { provider: 'openai', baseURL: '${server.url}', apiKey: 'sk-local', model: 'gpt-4o-mini', smallModel: 'gpt-4o-mini', retry: { baseDelayMs: 1 } };\n`,
    );
    const run = await runKeel(['-p', 'write hello.js and run it', '--output-format', 'json', '--permission-mode', 'auto', '--config', 'agent.config.ts'], {
      cwd: ws.dir,
      env: { KEEL_HOME: ws.home },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ subtype: 'success', result: 'It printed: hello from keel', num_turns: 3 });
    expect(readFileSync(ws.path('hello.js'), 'utf8')).toBe("console.log('hello from keel')\n");
    const bodies = server.completionRequests().map((r) => r.body);
    expect(bodies.map((b) => b.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini']);
    expect(bodies[0].tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(expect.arrayContaining(['write_file', 'bash']));
    const toolReply = bodies[2].messages.at(-1);
    expect(toolReply).toMatchObject({ role: 'tool', tool_call_id: 'call_r' });
    expect(toolReply.content).toContain('hello from keel');
    expect(existsSync(ws.path('hello.js'))).toBe(true);
  });
});
