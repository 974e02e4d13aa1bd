import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../kernel/index.js';
import compactAuto from '../../../plugins/compact-auto/index.js';
import compactSnip from '../../../plugins/compact-snip/index.js';
import contextBudget from '../../../plugins/context-budget/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import queryService from '../../../plugins/query-service/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer, type ScriptStep, type ScriptedTurn } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { assertPairsIntact, bigTool, FIVE_SECTIONS, isSmall, MAIN_MODEL, recorder, sized, SMALL_MODEL, textOfMessage, toolsPlugin } from './harness.js';

const WINDOW = 8000;
let server: ScriptedServer | undefined;
let ws: Workspace | undefined;

afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  server = undefined;
  ws = undefined;
});

/** A kernel with the budget, snip and AutoCompact, a small window, and a scripted server. */
async function setup(script: ScriptStep[], smallAnswer: (n: number) => ScriptedTurn, autoOpts: Parameters<typeof compactAuto>[0] = {}) {
  ws = makeWorkspace();
  let smallCalls = 0;
  server = await startAnthropicServer(script, { route: (request) => (isSmall(request) ? smallAnswer(++smallCalls) : undefined) });
  const rec = recorder();
  const kernel = testKernel(
    [rec.plugin, toolsPlugin(bigTool), queryAnthropic(), queryService(), permissions(), contextBudget(), compactSnip(), compactAuto(autoOpts)],
    { baseURL: server.url, keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir, contextWindow: WINDOW, maxTokens: 1000, maxTurns: 50, model: MAIN_MODEL, smallModel: SMALL_MODEL },
  );
  const session = await testSession(kernel);
  return { kernel, session, rec, smallCalls: () => server!.messageRequests().filter(isSmall) };
}

/** `turns` calls of the big tool (about 1 500 tokens of output each), then a final answer. */
function script(turns: number, overflows?: number[], window = WINDOW): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (let i = 0; i < turns; i++) steps.push(sized(callTool('big_output', { lines: 120, tag: `t${i}` }), window, overflows));
  steps.push(sized(say('all done'), window, overflows));
  return steps;
}

describe('compact-auto', () => {
  it('summarises older history with the small model into the five sections when room runs low', async () => {
    const overflows: number[] = [];
    const { kernel, session, rec, smallCalls } = await setup(script(10, overflows), () => say(FIVE_SECTIONS));
    const result = await runAgent(kernel, session, 'Run big_output ten times.');
    expect(result.subtype).toBe('success');
    expect(overflows).toEqual([]);

    const summaries = smallCalls();
    expect(summaries.length).toBeGreaterThan(0);
    const body = summaries[0]!.body as { model: string; system: Array<{ text: string }>; messages: Array<{ content: unknown }>; tools?: unknown[] };
    expect(body.model).toBe(SMALL_MODEL);
    for (const heading of ['## Completed tasks', '## Key findings', '## Current state', '## Pending work', '## Important decisions']) {
      expect(body.system.map((b) => b.text).join('\n')).toContain(heading);
    }
    expect(JSON.stringify(body.messages[0]!.content)).toContain('Run big_output ten times.');
    expect(body.tools ?? []).toEqual([]);

    const compacts = rec.of('compact');
    expect(compacts.length).toBe(summaries.length);
    expect(compacts[0]).toMatchObject({ trigger: 'auto', tier: 'compact-auto' });
    expect(compacts[0]!.postTokens).toBeLessThan(compacts[0]!.preTokens);

    // The live history starts with the summary, keeps the user's request verbatim and never orphans a pair.
    const head = textOfMessage(session.messages[0]!);
    expect(head).toContain('<summary>');
    expect(head).toContain('## Pending work');
    expect(head).toContain('Run big_output ten times.');
    assertPairsIntact(session.messages);
    // The request after the compaction carried the summary.
    const mainRequests = server!.messageRequests().filter((r) => !isSmall(r));
    const last = mainRequests[mainRequests.length - 1]!.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(last.messages[0]!.content)).toContain('<summary>');
    expect(kernel.state.get().contextBudget!.remaining).toBeGreaterThan(0);
  });

  it('trips the breaker after three failed summaries, then snip takes over without more small-model calls', async () => {
    const { kernel, session, rec, smallCalls } = await setup(script(14), () => ({ status: 500, errorMessage: 'summariser down' }));
    const result = await runAgent(kernel, session, 'Run big_output many times.');
    expect(result.subtype).toBe('success');
    expect(smallCalls().length).toBe(3);
    const compacts = rec.of('compact');
    expect(compacts.length).toBeGreaterThan(0);
    expect(compacts.every((c) => c.tier === 'compact-snip')).toBe(true);
    const logs = rec.of('log').map((l) => l.message);
    expect(logs.filter((m) => /AutoCompact failed \(\d of 3\)/.test(m))).toHaveLength(2);
    expect(logs.some((m) => m.includes('snip takes over'))).toBe(true);
    assertPairsIntact(session.messages);
  });

  it('counts a summary that comes back too long as a failure and leaves the history alone', async () => {
    const long = `${FIVE_SECTIONS}\n${'More detail. '.repeat(200)}`;
    const { kernel, session, rec } = await setup([say('ok')], () => say(long), { maxSummaryTokens: 200 });
    session.messages.push(
      { role: 'user', content: 'first request' },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: 'second' },
      { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
    );
    const before = JSON.stringify(session.messages);
    const compaction = kernel.services.get('compaction')!;
    expect(await compaction.compact(session, { trigger: 'auto' })).toBe(false);
    expect(JSON.stringify(session.messages)).toBe(before);
    expect(rec.of('log').some((l) => /too long/.test(l.message))).toBe(true);
    expect(rec.of('compact')).toHaveLength(0);
  });

  it('counts a summary without the five sections as a failure', async () => {
    const { kernel, session, rec } = await setup([], () => say('## Completed tasks\n- something'));
    session.messages.push(
      { role: 'user', content: 'first request' },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: 'second' },
      { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
    );
    expect(await kernel.services.get('compaction')!.compact(session, { trigger: 'auto' })).toBe(false);
    expect(rec.of('log').some((l) => l.message.includes('lacks the sections Key findings, Current state, Pending work, Important decisions'))).toBe(true);
  });

  it('counts the five section names as words in prose (not headings) as a failure', async () => {
    const prose = 'Completed tasks: none. Key findings: none. Current state: idle. Pending work: none. Important decisions: none.\n# Notes\nCurrent state is fine.';
    const { kernel, session, rec } = await setup([], () => say(prose));
    session.messages.push(
      { role: 'user', content: 'first request' },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: 'second' },
      { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
    );
    expect(await kernel.services.get('compaction')!.compact(session, { trigger: 'auto' })).toBe(false);
    expect(rec.of('log').some((l) => l.message.includes('lacks the sections Completed tasks, Key findings, Current state, Pending work, Important decisions'))).toBe(true);
  });

  it('frees room on the overflow route: the loop compacts and retries the request', async () => {
    const { kernel, session, rec } = await setup(
      [
        callTool('big_output', { lines: 50 }),
        callTool('big_output', { lines: 50 }),
        { status: 400, errorType: 'invalid_request_error', errorMessage: 'prompt is too long: 300000 tokens > 200000 maximum' },
        say('finished after compaction'),
      ],
      () => say(FIVE_SECTIONS),
    );
    const result = await runAgent(kernel, session, 'Make two big outputs.');
    expect(result.subtype).toBe('success');
    expect(result.result).toBe('finished after compaction');
    expect(rec.of('compact')[0]).toMatchObject({ trigger: 'overflow', tier: 'compact-auto' });
    assertPairsIntact(session.messages);
    // The retried request still carried the user's request, folded into the summary head.
    const retried = server!.messageRequests().filter((r) => !isSmall(r)).at(-1)!.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(retried.messages[0]!.content)).toContain(`The user's latest request, verbatim:`);
    expect(JSON.stringify(retried.messages[0]!.content)).toContain('"text":"Make two big outputs."');
  });

  it('on overflow, a failed summary falls back to snip at once so the run goes on', async () => {
    const { kernel, session, rec } = await setup(
      [
        callTool('big_output', { lines: 10 }),
        callTool('big_output', { lines: 10 }),
        callTool('big_output', { lines: 10 }),
        { status: 400, errorType: 'invalid_request_error', errorMessage: 'prompt is too long' },
        say('done'),
      ],
      () => ({ status: 500 }),
      { keepTurns: 1 },
    );
    const result = await runAgent(kernel, session, 'go');
    expect(result.subtype).toBe('success');
    expect(rec.of('compact')[0]).toMatchObject({ trigger: 'overflow', tier: 'compact-snip' });
  });

  it('reads its settings from config key autoCompact (enabled: false turns the automatic trigger off)', async () => {
    ws = makeWorkspace();
    server = await startAnthropicServer(script(10, undefined, 30_000), { route: (request) => (isSmall(request) ? say(FIVE_SECTIONS) : undefined) });
    const rec = recorder();
    const kernel = testKernel([rec.plugin, toolsPlugin(bigTool), queryAnthropic(), queryService(), permissions(), contextBudget(), compactAuto()], {
      baseURL: server.url,
      keelHome: ws.home,
      contextWindow: 30_000,
      maxTokens: 1000,
      smallModel: SMALL_MODEL,
      autoCompact: { enabled: false },
    });
    const result = await runAgent(kernel, await testSession(kernel), 'go');
    expect(result.subtype).toBe('success');
    expect(rec.of('compact')).toHaveLength(0);
    expect(server.messageRequests().filter(isSmall)).toHaveLength(0);
  });

  it('declares its config key so the CLI validates it', () => {
    const schema = compactAuto().config!.autoCompact!;
    expect(schema.safeParse({ bufferTokens: 5000, keepTurns: 2 }).success).toBe(true);
    expect(schema.safeParse({ bufferTokens: -1 }).success).toBe(false);
    expect(schema.safeParse({ bogus: 1 }).success).toBe(false);
  });
});
