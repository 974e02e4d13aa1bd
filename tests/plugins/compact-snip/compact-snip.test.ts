import { afterEach, describe, expect, it } from 'vitest';
import type { MessageParam } from '../../../kernel/index.js';
import { runAgent } from '../../../kernel/index.js';
import compactSnip from '../../../plugins/compact-snip/index.js';
import { snipMessages } from '../../../plugins/compact-snip/snip.js';
import contextBudget from '../../../plugins/context-budget/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { assertPairsIntact, bigTool, randomHistory as history, recorder, sized, textOfMessage, toolsPlugin } from '../compact-auto/harness.js';

describe('snipMessages', () => {
  it('never orphans a tool pair, keeps the first request and the latest request, over many histories', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const messages = history(seed, 3 + (seed % 25));
      const lastRequest = [...messages].reverse().find((m) => typeof m.content === 'string')!;
      for (const keepTurns of [0, 1, 2, 5]) {
        const plan = snipMessages(messages, { keepTurns, fits: (m) => m.length < 6 });
        if (!plan) continue;
        assertPairsIntact(plan.messages);
        expect(plan.messages[0]!.role).toBe('user');
        expect(plan.messages[1]?.role ?? 'assistant').toBe('assistant');
        const all = plan.messages.map(textOfMessage).join('\n');
        expect(all).toContain('the first request');
        expect(all).toContain(lastRequest.content as string);
        const last = messages[messages.length - 1]!;
        if (last.role === 'assistant') expect(plan.messages[plan.messages.length - 1]).toBe(last);
      }
    }
  });

  it('keeps the last N turns and says how many messages went', () => {
    const messages = history(7, 20);
    const plan = snipMessages(messages, { keepTurns: 3 })!;
    expect(plan.messages.filter((m) => m.role === 'assistant')).toHaveLength(3);
    expect(textOfMessage(plan.messages[0]!)).toContain(`${plan.removed} older messages were removed`);
    expect(plan.messages.length + plan.removed).toBe(messages.length);
  });

  it('replaces an earlier snip marker instead of stacking them', () => {
    const once = snipMessages(history(3, 30), { keepTurns: 10 })!.messages;
    const twice = snipMessages(once, { keepTurns: 2 })!.messages;
    expect(textOfMessage(twice[0]!).match(/Earlier conversation snipped/g)).toHaveLength(1);
  });

  it('keeps an unanswered tool_use at the end', () => {
    const messages = history(5, 10);
    const open: MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: 'open', name: 'x', input: {} }] };
    if (messages[messages.length - 1]!.role === 'assistant') messages.push({ role: 'user', content: 'more' });
    messages.push(open);
    const plan = snipMessages(messages, { keepTurns: 0, fits: () => false })!;
    expect(plan.messages[plan.messages.length - 1]).toBe(open);
  });

  it('returns null when there is nothing to drop', () => {
    expect(snipMessages([{ role: 'user', content: 'hi' }], { keepTurns: 2 })).toBeNull();
    expect(snipMessages([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }], { keepTurns: 2 })).toBeNull();
  });
});

describe('compact-snip plugin', () => {
  let server: ScriptedServer | undefined;
  let ws: Workspace | undefined;
  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  it('snips when the context passes 98% of the window, and emits compact', async () => {
    ws = makeWorkspace();
    const window = 6000;
    const overflows: number[] = [];
    server = await startAnthropicServer([
      ...Array.from({ length: 12 }, () => sized(callTool('big_output', { lines: 100 }), window, overflows)),
      sized(say('done'), window, overflows),
    ]);
    const rec = recorder();
    const kernel = testKernel([rec.plugin, toolsPlugin(bigTool), queryAnthropic(), permissions(), contextBudget(), compactSnip({ keepTurns: 2 })], {
      baseURL: server.url,
      keelHome: ws.home,
      contextWindow: window,
      maxTokens: 500,
    });
    const session = await testSession(kernel);
    const result = await runAgent(kernel, session, 'go');
    expect(result.subtype).toBe('success');
    expect(overflows).toEqual([]);
    const compacts = rec.of('compact');
    expect(compacts.length).toBeGreaterThan(0);
    expect(compacts[0]).toMatchObject({ trigger: 'snip', tier: 'compact-snip' });
    expect(compacts[0]!.preTokens).toBeGreaterThanOrEqual(window * 0.98);
    assertPairsIntact(session.messages);
  });
});
