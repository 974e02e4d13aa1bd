/**
 * A host written for Claude Code's SDK message shapes reads Keel's results unchanged. The types below are the
 * result message of `@anthropic-ai/claude-agent-sdk` 0.3.328 (sdk.d.ts: `SDKResultMessage = SDKResultSuccess |
 * SDKResultError`), the required fields and the ones such a host reads, with the same names and subtypes; Keel is
 * driven as that SDK drives `claude`: `--input-format stream-json --output-format stream-json` plus its flags.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedTurn } from '../helpers/anthropic-server.js';
import { cleanEnv, KEEL_BIN } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  webSearchRequests: number;
  costUSD: number;
  contextWindow: number;
  maxOutputTokens: number;
}

interface ResultBase {
  type: 'result';
  duration_ms: number;
  duration_api_ms: number;
  is_error: boolean;
  num_turns: number;
  stop_reason: string | null;
  total_cost_usd: number;
  usage: Record<string, unknown>;
  modelUsage: Record<string, ModelUsage>;
  permission_denials: Array<{ tool_name: string; tool_use_id: string; tool_input: unknown }>;
  uuid: string;
  session_id: string;
}

type SDKResultSuccess = ResultBase & { subtype: 'success'; result: string; structured_output?: unknown };
type SDKResultError = ResultBase & {
  subtype: 'error_during_execution' | 'error_max_turns' | 'error_max_budget_usd' | 'error_max_structured_output_retries';
  errors: string[];
};
type SDKResultMessage = SDKResultSuccess | SDKResultError;

/** What a typical host does with a result: the typed answer, or why there is none, and the spend. */
function hostRead(message: SDKResultMessage): { ok: true; data: unknown; cost: number } | { ok: false; why: string; detail: string; cost: number } {
  switch (message.subtype) {
    case 'success':
      return { ok: true, data: message.structured_output, cost: message.total_cost_usd };
    case 'error_max_budget_usd':
      return { ok: false, why: 'over budget', detail: message.errors.join('; '), cost: message.total_cost_usd };
    case 'error_max_structured_output_retries':
      return { ok: false, why: 'no valid answer', detail: message.errors.join('; '), cost: message.total_cost_usd };
    default:
      return { ok: false, why: message.subtype, detail: message.errors.join('; '), cost: message.total_cost_usd };
  }
}

/** Every required field of the SDK's result types is there, with its JSON type. */
function expectResultShape(message: Record<string, unknown>): void {
  const required: Record<string, string> = {
    type: 'string',
    subtype: 'string',
    duration_ms: 'number',
    duration_api_ms: 'number',
    is_error: 'boolean',
    num_turns: 'number',
    total_cost_usd: 'number',
    usage: 'object',
    modelUsage: 'object',
    permission_denials: 'object',
    uuid: 'string',
    session_id: 'string',
  };
  if (message.subtype === 'success') required.result = 'string';
  else required.errors = 'object';
  for (const [field, type] of Object.entries(required)) expect([field, typeof message[field]]).toEqual([field, type]);
  expect('stop_reason' in message).toBe(true);
  for (const usage of Object.values(message.modelUsage as Record<string, Record<string, unknown>>)) {
    for (const field of ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens', 'webSearchRequests', 'costUSD', 'contextWindow', 'maxOutputTokens']) {
      expect([field, typeof usage[field]]).toEqual([field, 'number']);
    }
  }
}

const prepare = useScriptedProjects();

/** Keel in SDK mode, as the Claude Agent SDK spawns `claude`; returns each result as it comes. */
function sdkSession(cwd: string, env: Record<string, string>, flags: string[]) {
  const child = spawn(KEEL_BIN, ['--input-format', 'stream-json', '--output-format', 'stream-json', ...flags], { cwd, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  const results: SDKResultMessage[] = [];
  const waiting: Array<(m: SDKResultMessage) => void> = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const message = JSON.parse(line) as { type: string };
    if (message.type !== 'result') return;
    expectResultShape(message as Record<string, unknown>);
    const waiter = waiting.shift();
    if (waiter) waiter(message as SDKResultMessage);
    else results.push(message as SDKResultMessage);
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    ask(text: string): Promise<SDKResultMessage> {
      child.stdin!.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' })}\n`);
      const ready = results.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    async close(): Promise<{ code: number | null; stderr: string }> {
      child.stdin!.end();
      return { code: await exited, stderr };
    },
    kill: () => child.kill('SIGKILL'),
  };
}

const SCHEMA = JSON.stringify({ type: 'object', properties: { files: { type: 'array', items: { type: 'string' } } }, required: ['files'] });
const THIRTY_CENTS = { input_tokens: 100_000, output_tokens: 0 };

describe('a host written for the Claude Agent SDK', () => {
  it('reads structured_output from a success result, then error_max_budget_usd once the budget is spent (SDK mode)', async () => {
    const answer: ScriptedTurn = { ...callTool('StructuredOutput', { files: ['a.ts', 'b.ts'] }), usage: THIRTY_CENTS };
    const { env, ws, server } = await prepare([answer, say('never sent')]);
    const session = sdkSession(ws.dir, env, ['--json-schema', SCHEMA, '--max-budget-usd', '0.25']);
    try {
      const first = hostRead(await session.ask('which files?'));
      expect(first).toEqual({ ok: true, data: { files: ['a.ts', 'b.ts'] }, cost: expect.closeTo(0.3, 6) });
      const second = hostRead(await session.ask('and now?'));
      expect(second).toMatchObject({ ok: false, why: 'over budget', detail: expect.stringContaining('--max-budget-usd') });
      expect(server.messageRequests()).toHaveLength(1);
      const { code } = await session.close();
      expect(code).not.toBeNull();
    } finally {
      session.kill();
    }
  });

  it('reads error_max_structured_output_retries when the model never gives a valid answer', async () => {
    const bad = () => callTool('structured_output', { files: 'not a list' });
    const { env, ws } = await prepare([bad(), bad(), bad(), bad(), say('never')]);
    const session = sdkSession(ws.dir, env, ['--json-schema', SCHEMA]);
    try {
      const outcome = hostRead(await session.ask('which files?'));
      expect(outcome).toMatchObject({ ok: false, why: 'no valid answer', detail: expect.stringContaining('/files: must be array') });
    } finally {
      session.kill();
    }
  });
});

describe('/goal in a session', () => {
  it('sets a goal that the next prompts work towards; /goal shows it and /goal clear drops it', async () => {
    const JUDGE = 'claude-haiku-judge';
    const verdicts = ['NOT MET: no file yet', 'MET: the file exists'];
    const { env, ws, server } = await prepare([say('thinking'), say('made it'), say('plain answer')], {
      route: (request) => (request.body?.model === JUDGE ? say(verdicts.shift() ?? 'NOT MET: none left') : undefined),
    });
    const session = sdkSession(ws.dir, env, ['--small-model', JUDGE]);
    try {
      const set = (await session.ask('/goal the file exists')) as SDKResultSuccess;
      expect(set.result).toBe('Goal set: the file exists. Each answer is checked against it; work continues until it holds.');
      const worked = (await session.ask('make the file')) as SDKResultSuccess & { goal?: unknown };
      expect(worked).toMatchObject({ subtype: 'success', result: 'made it', num_turns: 2, goal: { condition: 'the file exists', met: true, checks: 2 } });
      expect(((await session.ask('/goal')) as SDKResultSuccess).result).toBe('Goal: the file exists — met');
      expect(((await session.ask('/goal clear')) as SDKResultSuccess).result).toBe('Goal cleared.');
      const plain = (await session.ask('anything else?')) as SDKResultSuccess & { goal?: unknown };
      expect(plain).toMatchObject({ subtype: 'success', result: 'plain answer' });
      expect(plain.goal).toBeUndefined();
      expect(server.messageRequests().filter((r) => r.body.model === JUDGE)).toHaveLength(2);
    } finally {
      session.kill();
    }
  });
});
