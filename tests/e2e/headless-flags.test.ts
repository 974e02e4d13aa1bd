/**
 * Keel's headless power through the built binary against the scripted model: --json-schema (an invalid answer,
 * then a valid one; and retries used up), --max-budget-usd (a budget hit mid-run, the session's across
 * --continue), --fallback-model (the main model answers 529 until its retries are spent), --goal (met on the
 * third turn; never met, bounded by --max-turns).
 */
import { describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest, type ScriptedTurn } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { toolResultsOf } from '../helpers/conversations.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();

const SCHEMA = JSON.stringify({
  type: 'object',
  properties: { verdict: { type: 'string', enum: ['pass', 'fail'] }, count: { type: 'integer', minimum: 0 } },
  required: ['verdict', 'count'],
  additionalProperties: false,
});

const resultOf = (stdout: string) => ndjson(stdout).find((line) => line.type === 'result');

describe('--json-schema', () => {
  it('sends an invalid answer back with the validation errors, then ends with the valid one as structured_output', async () => {
    const { env, ws, server } = await prepare([
      callTool('StructuredOutput', { verdict: 'maybe', count: -1 }),
      callTool('structured_output', { verdict: 'pass', count: 3 }),
    ]);
    const run = await runKeel(['-p', 'check it', '--json-schema', SCHEMA, '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const first = server.messageRequests()[0]!;
    const tool = first.body.tools.find((t: { name: string }) => t.name === 'structured_output');
    expect(tool.input_schema).toMatchObject(JSON.parse(SCHEMA));
    const sentBack = toolResultsOf(server.messageRequests()[1]!)[0]!;
    expect(sentBack.is_error).toBe(true);
    expect(sentBack.content).toContain('/verdict: must be equal to one of the allowed values');
    expect(sentBack.content).toContain('/count: must be >= 0');
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', is_error: false, structured_output: { verdict: 'pass', count: 3 } });
    expect(JSON.parse(result.result)).toEqual({ verdict: 'pass', count: 3 });
    expect(server.messageRequests()).toHaveLength(2);
  });

  it('a schema in a file works with text output; an answer in prose is sent back too', async () => {
    const { env, ws, server } = await prepare([say('It passes.'), callTool('structured_output', { verdict: 'fail', count: 0 })]);
    ws.write('schema.json', SCHEMA);
    const run = await runKeel(['-p', 'check it', '--json-schema', 'schema.json'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ verdict: 'fail', count: 0 });
    const nudge = server.messageRequests()[1]!.body.messages.at(-1);
    expect(JSON.stringify(nudge)).toContain('structured_output');
  });

  it('ends with error_max_structured_output_retries and exit 1 once the retries (config structuredOutputRetries) are used up', async () => {
    const bad = () => callTool('structured_output', { verdict: 'nope', count: 1 });
    const { env, ws, server } = await prepare([bad(), bad(), bad(), say('never asked')]);
    ws.write('keel.config.json', JSON.stringify({ structuredOutputRetries: 2 }));
    const run = await runKeel(['-p', 'check it', '--json-schema', SCHEMA, '--output-format', 'stream-json', '--config', 'keel.config.json'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    const result = resultOf(run.stdout);
    expect(result).toMatchObject({ type: 'result', subtype: 'error_max_structured_output_retries', is_error: true });
    expect(result.errors[0]).toContain('no valid structured output after 3 attempts');
    expect(result.structured_output).toBeUndefined();
    expect(run.stderr).toMatch(/^keel: no valid structured output after 3 attempts/);
    expect(server.messageRequests()).toHaveLength(3);
  });

  it('--tools that leave out the structured_output tool are refused, naming both flags', async () => {
    const { env, ws, server } = await prepare([callTool('structured_output', { verdict: 'pass', count: 1 })]);
    const run = await runKeel(['-p', 'x', '--json-schema', SCHEMA, '--tools', 'Read'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--json-schema: --tools (config tools) leaves out structured_output');
    const ok = await runKeel(['-p', 'x', '--json-schema', SCHEMA, '--tools', 'Read,StructuredOutput', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(JSON.parse(ok.stdout)).toMatchObject({ subtype: 'success', structured_output: { verdict: 'pass', count: 1 } });
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('a bad schema or a missing file is one line naming --json-schema, before any request', async () => {
    const { env, ws, server } = await prepare([say('never')]);
    const missing = await runKeel(['-p', 'x', '--json-schema', 'nope.json'], { cwd: ws.dir, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^keel: --json-schema: "nope.json" is neither JSON nor a readable file/);
    const invalid = await runKeel(['-p', 'x', '--json-schema', '{"type":"object","properties":{"a":{"type":"strin"}}}'], { cwd: ws.dir, env });
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain('--json-schema: not a valid JSON Schema');
    const notObject = await runKeel(['-p', 'x', '--json-schema', '{"type":"array"}'], { cwd: ws.dir, env });
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('--json-schema');
    expect(server.messageRequests()).toHaveLength(0);
  });
});

/** Usage worth $0.30 at the default model's price ($3 per million input tokens). */
const THIRTY_CENTS = { input_tokens: 100_000, output_tokens: 0 };

describe('--max-budget-usd', () => {
  it('starts no request once the cost reached the budget: error_max_budget_usd, exit 1, the cost in the result', async () => {
    const costly = (turn: ScriptedTurn): ScriptedTurn => ({ ...turn, usage: THIRTY_CENTS });
    const { env: env2, ws: ws2, server: server2 } = await prepare([costly(callTool('ls', { path: '.' })), costly(callTool('ls', { path: '.' })), say('never sent')]);
    const run = await runKeel(['-p', 'look around', '--max-budget-usd', '0.5', '--output-format', 'json'], { cwd: ws2.dir, env: env2 });
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ type: 'result', subtype: 'error_max_budget_usd', is_error: true, num_turns: 3 });
    expect(result.total_cost_usd).toBeCloseTo(0.6, 6);
    expect(result.errors[0]).toContain('reached its budget of $0.5');
    expect(run.stderr).toMatch(/^keel: the session has spent \$0\.6000, which reached its budget of \$0\.5/);
    expect(server2.messageRequests()).toHaveLength(2);
  });

  it("is the session's across --continue: a continued run over budget starts no request", async () => {
    const { env, ws, server } = await prepare([{ ...say('first'), usage: THIRTY_CENTS }, say('never sent')]);
    const first = await runKeel(['-p', 'one', '--max-budget-usd', '0.25'], { cwd: ws.dir, env });
    expect(first.code).toBe(0);
    const second = await runKeel(['-p', 'two', '--continue', '--max-budget-usd', '0.25', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(second.code).toBe(1);
    expect(JSON.parse(second.stdout)).toMatchObject({ subtype: 'error_max_budget_usd', is_error: true });
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('is never left unenforced: a preset without the budget plugin refuses to run', async () => {
    const { env, ws, server } = await prepare([say('never')]);
    const run = await runKeel(['-p', 'x', '--preset', 'minimal', '--max-budget-usd', '1'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("keel: --max-budget-usd cannot be enforced: the plugin that enforces it (budget) is not loaded; add it to `plugins` or pick a preset that has it (default, headless)\n");
    const schema = await runKeel(['-p', 'x', '--preset', 'minimal', '--json-schema', SCHEMA], { cwd: ws.dir, env });
    expect(schema.code).toBe(2);
    expect(schema.stderr).toContain('--json-schema cannot be enforced');
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('rejects a budget that is not a positive number, naming the flag', async () => {
    const { env, ws } = await prepare([]);
    const run = await runKeel(['-p', 'x', '--max-budget-usd', 'ten'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('keel: --max-budget-usd: expected a positive number of US dollars, got "ten"\n');
  });
});

describe('--fallback-model', () => {
  it('sends the request to the fallback once the main model stays overloaded after its retries, and says so', async () => {
    const overloadedMain = (request: RecordedRequest): ScriptedTurn | undefined =>
      request.body?.model === 'claude-sonnet-main' ? { status: 529, errorMessage: 'Overloaded' } : undefined;
    const { env, ws, server } = await prepare([callTool('ls', { path: '.' }), say('answered by the fallback')], { route: overloadedMain });
    ws.write('keel.config.json', JSON.stringify({ retry: { maxRetries: 1, baseDelayMs: 1 } }));
    const run = await runKeel(
      ['-p', 'hi', '--model', 'claude-sonnet-main', '--fallback-model', 'claude-haiku-spare', '--output-format', 'stream-json', '--config', 'keel.config.json'],
      { cwd: ws.dir, env },
    );
    expect(run.code).toBe(0);
    const models = server.messageRequests().map((r) => r.body.model);
    // Two tries of the main model (one retry), then the fallback for this and every later request.
    expect(models).toEqual(['claude-sonnet-main', 'claude-sonnet-main', 'claude-haiku-spare', 'claude-haiku-spare']);
    expect(run.stderr).toContain('claude-sonnet-main stayed overloaded after its retries: switching to the fallback model claude-haiku-spare');
    expect(resultOf(run.stdout)).toMatchObject({ subtype: 'success', result: 'answered by the fallback' });
  });

  it('without a fallback the overload is the run error; a fallback equal to the main model is refused', async () => {
    const { env, ws } = await prepare([]);
    const same = await runKeel(['-p', 'x', '--model', 'claude-a', '--fallback-model', 'claude-a'], { cwd: ws.dir, env });
    expect(same.code).toBe(2);
    expect(same.stderr).toContain('--fallback-model: the fallback model "claude-a" is the main model');
  });
});

describe('--goal', () => {
  const JUDGE = 'claude-haiku-judge';
  const judgeRoute = (verdicts: string[]) => (request: RecordedRequest): ScriptedTurn | undefined => {
    if (request.body?.model !== JUDGE) return undefined;
    return say(verdicts.shift() ?? 'NOT MET: out of verdicts');
  };

  it('keeps working until the small model finds the goal met (third turn); the result says it was met', async () => {
    const verdicts = ['NOT MET: no tests yet', 'NOT MET: tests fail', 'MET: tests pass'];
    const { env, ws, server } = await prepare([say('wrote code'), say('wrote tests'), say('fixed the bug')], { route: judgeRoute(verdicts) });
    const run = await runKeel(['-p', 'make the tests pass', '--goal', 'the tests pass', '--small-model', JUDGE, '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ subtype: 'success', result: 'fixed the bug', num_turns: 3, goal: { condition: 'the tests pass', met: true, checks: 3 } });
    const main = server.messageRequests().filter((r) => r.body.model !== JUDGE);
    expect(JSON.stringify(main[1]!.body.messages.at(-1))).toContain('The goal is not met yet: no tests yet');
    expect(JSON.stringify(main[2]!.body.messages.at(-1))).toContain('tests fail');
    const judged = server.messageRequests().filter((r) => r.body.model === JUDGE);
    expect(judged).toHaveLength(3);
    expect(JSON.stringify(judged[0]!.body.messages)).toContain('Goal: the tests pass');
  });

  it('a goal never met ends at --max-turns with met: false and exit 1', async () => {
    const { env, ws, server } = await prepare([say('try 1'), say('try 2'), say('try 3'), say('never')], { route: judgeRoute(['NOT MET: a', 'NOT MET: b', 'NOT MET: c', 'NOT MET: d']) });
    const run = await runKeel(['-p', 'go', '--goal', 'the moon is cheese', '--small-model', JUDGE, '--max-turns', '2', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ subtype: 'error_max_turns', is_error: true, goal: { met: false, checks: 2 } });
    expect(server.messageRequests().filter((r) => r.body.model !== JUDGE)).toHaveLength(2);
  });

  it('a goal whose judge would pass the budget ends with error_max_budget_usd and met: false', async () => {
    const { env, ws, server } = await prepare([{ ...say('tried'), usage: THIRTY_CENTS }], { route: judgeRoute(['MET: never asked']) });
    const run = await runKeel(['-p', 'go', '--goal', 'x', '--small-model', JUDGE, '--max-budget-usd', '0.2', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ subtype: 'error_max_budget_usd', goal: { met: false, checks: 1 } });
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('--goal-check runs the command under the permission policy; its exit code is part of the goal', async () => {
    const { env, ws, server } = await prepare([say('not yet'), callTool('write_file', { path: 'done.flag', content: 'x' }), say('now')], { route: judgeRoute(['MET: fine']) });
    const run = await runKeel(
      ['-p', 'go', '--goal', 'done.flag exists', '--goal-check', 'test -f done.flag', '--allowedTools', 'Bash(test -f done.flag),Write', '--small-model', JUDGE, '--output-format', 'json'],
      { cwd: ws.dir, env },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ subtype: 'success', goal: { met: true, checks: 2 } });
    const main = server.messageRequests().filter((r) => r.body.model !== JUDGE);
    expect(JSON.stringify(main[1]!.body.messages.at(-1))).toContain('exited with 1');
    // The judge is asked only once the command passes.
    expect(server.messageRequests().filter((r) => r.body.model === JUDGE)).toHaveLength(1);
  });

  it('a --goal-check the permission policy does not allow ends the run, naming the flag', async () => {
    const { env, ws } = await prepare([say('done')]);
    const run = await runKeel(['-p', 'go', '--goal', 'x', '--goal-check', 'rm -rf /tmp/nothing-here', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result.errors[0]).toMatch(/^--goal-check "rm -rf \/tmp\/nothing-here": the permission policy did not allow it/);
    expect(result.goal).toMatchObject({ met: false });
  });
});

describe('--max-budget-usd and sub-agents', () => {
  it("a sub-agent gets what is left of the parent's budget and never exceeds it; the parent then stops too", async () => {
    const { routeConversations, conversation, toolResultsOf: results } = await import('../helpers/conversations.js');
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [{ ...callTool('agent', { task: 'CHILD look around' }, 'toolu_child'), usage: THIRTY_CENTS }, say('never sent')],
        // With the parent's whole $0.50 the child could make its second request; with the $0.20 left it cannot.
        CHILD: [{ ...callTool('ls', { path: '.' }), usage: THIRTY_CENTS }, say('child never gets here')],
      }),
    });
    const run = await runKeel(['-p', 'PARENT go', '--max-budget-usd', '0.5', '--permission-mode', 'auto', '--output-format', 'json'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(1);
    expect(conversation(server.requests, 'CHILD')).toHaveLength(1);
    expect(conversation(server.requests, 'PARENT')).toHaveLength(1);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ subtype: 'error_max_budget_usd', is_error: true });
    expect(result.total_cost_usd).toBeCloseTo(0.6, 6);
    void results;
  });
});

describe("Claude Code's remaining headless flags", () => {
  it('--settings (JSON or a file) adds settings above the settings files; --setting-sources picks which files are read', async () => {
    const { env, ws, server } = await prepare([say('a'), say('b'), say('c'), say('d')]);
    const home = { ...env, HOME: ws.home };
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(`${ws.home}/.claude`, { recursive: true });
    writeFileSync(`${ws.home}/.claude/settings.json`, JSON.stringify({ permissions: { deny: ['Glob'] } }));
    const toolsOf = (i: number) => (server.messageRequests()[i]!.body.tools as Array<{ name: string }>).map((t) => t.name);

    expect((await runKeel(['-p', 'x'], { cwd: ws.dir, env: home })).code).toBe(0);
    expect(toolsOf(0)).not.toContain('glob');
    expect((await runKeel(['-p', 'x', '--setting-sources', 'project,local'], { cwd: ws.dir, env: home })).code).toBe(0);
    expect(toolsOf(1)).toContain('glob');
    expect((await runKeel(['-p', 'x', '--setting-sources', 'project', '--settings', '{"permissions":{"deny":["Bash"]}}'], { cwd: ws.dir, env: home })).code).toBe(0);
    expect(toolsOf(2)).not.toContain('bash');
    ws.write('ci-settings.json', JSON.stringify({ permissions: { deny: ['Grep'] } }));
    expect((await runKeel(['-p', 'x', '--settings', 'ci-settings.json'], { cwd: ws.dir, env: home })).code).toBe(0);
    expect(toolsOf(3)).not.toContain('grep');

    const bad = await runKeel(['-p', 'x', '--setting-sources', 'user,global'], { cwd: ws.dir, env: home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('keel: --setting-sources: unknown source "global" (expected a comma-separated list of user, project, local)\n');
    const broken = await runKeel(['-p', 'x', '--settings', '{"permissions":'], { cwd: ws.dir, env: home });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^keel: --settings: not valid JSON/);
  });

  it('--strict-mcp-config uses only the servers of --mcp-config', async () => {
    const { testServer } = await import('../helpers/mcp.js');
    const { env, ws } = await prepare([]);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${ws.home}/mcp.json`, JSON.stringify({ mcpServers: { userside: testServer(ws.dir) } }));
    const flagged = JSON.stringify({ mcpServers: { flagside: testServer(ws.dir) } });
    const both = await runKeel(['-p', '/mcp', '--mcp-config', flagged], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(both.stdout).toContain('userside');
    expect(both.stdout).toContain('flagside');
    const strict = await runKeel(['-p', '/mcp', '--mcp-config', flagged, '--strict-mcp-config'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(strict.code).toBe(0);
    expect(strict.stdout).toContain('flagside');
    expect(strict.stdout).not.toContain('userside');
  });

  it('--agents defines custom sub-agents by name; a malformed definition names the flag', async () => {
    const { env, ws, server } = await prepare([say('hi')]);
    const agents = JSON.stringify({ reviewer: { description: 'Reviews diffs for bugs', prompt: 'You review code.', tools: ['Read', 'Grep'] } });
    const run = await runKeel(['-p', 'x', '--agents', agents], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const agentTool = (server.messageRequests()[0]!.body.tools as Array<{ name: string; description: string }>).find((t) => t.name === 'agent')!;
    expect(agentTool.description).toContain('- reviewer: Reviews diffs for bugs (tools: read_file, grep)');
    const bad = await runKeel(['-p', 'x', '--agents', '{"reviewer":{"prompt":"p"}}'], { cwd: ws.dir, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('keel: --agents: agent "reviewer" needs "description" and "prompt" strings\n');
  });

  it('--debug [filter] writes diagnostics to stderr, only of the sources the filter names', async () => {
    const { env, ws } = await prepare([say('a'), say('b')]);
    const all = await runKeel(['-p', 'x', '--debug'], { cwd: ws.dir, env });
    expect(all.code).toBe(0);
    const sources = new Set([...all.stderr.matchAll(/^\[\w+\] ([\w-]+):/gm)].map((m) => m[1]));
    expect(sources.size).toBeGreaterThan(0);
    const [first] = [...sources];
    const without = await runKeel(['-p', 'x', `--debug=!${first}`], { cwd: ws.dir, env });
    expect(without.code).toBe(0);
    expect(without.stderr).not.toContain(`] ${first}:`);
  });
});
