import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../kernel/index.js';
import contextBudget from '../../../plugins/context-budget/index.js';
import { estimateMessages } from '../../../plugins/context-budget/estimate.js';
import { windowFor } from '../../../plugins/context-budget/windows.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import usage from '../../../plugins/usage/index.js';
import { windowOf } from '../../../plugins/usage/pricing.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { bigTool, toolsPlugin } from '../compact-auto/harness.js';

describe('context-budget', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  it('knows model windows, with a fallback', () => {
    expect(windowFor('claude-sonnet-5-5')).toBe(200_000);
    expect(windowFor('claude-sonnet-4-5[1m]')).toBe(1_000_000);
    expect(windowFor('gpt-4.1-mini')).toBe(1_047_576);
    expect(windowFor('gpt-4o-mini')).toBe(128_000);
    expect(windowFor('some-local-model')).toBe(128_000);
  });

  it('agrees with the usage plugin, whose published window it reads first', async () => {
    for (const model of ['claude-opus-4-1', 'claude-sonnet-4-5[1m]', 'gpt-4o', 'gpt-4.1', 'gpt-4.1-nano', 'gpt-5-mini', 'o3', 'o4-mini', 'llama-3-local']) {
      expect(windowFor(model), model).toBe(windowOf(model));
    }
    server = await startAnthropicServer([say('hi')]);
    const kernel = testKernel([queryAnthropic(), permissions(), usage(), contextBudget()], { baseURL: server.url, model: 'claude-test' });
    const session = await testSession(kernel);
    kernel.state.set({ contextWindow: 77_000 });
    expect(kernel.services.get('budget')!.window(session)).toBe(77_000);
  });

  it('estimates images at a flat rate, not by their base64 size', () => {
    const image = { role: 'user' as const, content: [{ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'A'.repeat(400_000) } }] };
    expect(estimateMessages([image])).toBeLessThan(2000);
  });

  it('tracks usage from the API plus an estimate of what came after, and publishes it', async () => {
    server = await startAnthropicServer([
      callTool('big_output', { lines: 100 }),
      say('done', { usage: { input_tokens: 3000, cache_read_input_tokens: 1000, output_tokens: 50 } }),
    ]);
    const kernel = testKernel([toolsPlugin(bigTool), queryAnthropic(), permissions(), contextBudget()], { baseURL: server.url, contextWindow: 50_000, maxTokens: 4000 });
    const session = await testSession(kernel);
    await runAgent(kernel, session, 'go');
    const budget = kernel.services.get('budget')!;
    expect(budget.window(session)).toBe(50_000);
    // The last response: 3 000 + 1 000 prompt tokens and 50 output; nothing came after it.
    expect(budget.used(session)).toBe(4050);
    expect(kernel.state.get().contextBudget).toEqual({ window: 50_000, used: 4050, remaining: 50_000 - 4050 - 4000, ratio: 4050 / 50_000, estimated: false });
    // A message appended since is estimated on top.
    session.messages.push({ role: 'user', content: 'x'.repeat(400) });
    expect(budget.used(session)).toBe(4050 + 100 + 4);
  });

  it('falls back to an estimate when the history is rewritten (the working budget starts afresh)', async () => {
    // The API counts 10 100 prompt tokens for a 10 000-token request: 100 are system prompt and tools.
    server = await startAnthropicServer([say('done', { usage: { input_tokens: 10_100, output_tokens: 10 } })]);
    const kernel = testKernel([queryAnthropic(), permissions(), contextBudget()], { baseURL: server.url, contextWindow: 50_000 });
    const session = await testSession(kernel);
    await runAgent(kernel, session, 'x'.repeat(39_984));
    const budget = kernel.services.get('budget')!;
    expect(budget.used(session)).toBe(10_110);
    session.messages.splice(0, session.messages.length, { role: 'user', content: 'a summary' });
    const state = budget.publish(session);
    expect(state.estimated).toBe(true);
    expect(state.used).toBe(100 + 3 + 4);
  });

  it('fills the context budget the loop hands to contextLoad', async () => {
    server = await startAnthropicServer([say('hi')]);
    const kernel = testKernel([queryAnthropic(), permissions(), contextBudget()], { baseURL: server.url, model: 'claude-test' });
    const session = await testSession(kernel);
    await runAgent(kernel, session, 'go');
    expect(kernel.state.get().contextBudget!.window).toBe(200_000);
  });
});
