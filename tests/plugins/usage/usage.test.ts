import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, runAgent, type AgentEvent, type Turn } from '../../../kernel/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import queryService from '../../../plugins/query-service/index.js';
import usage, { costOf, findPrice } from '../../../plugins/usage/index.js';
import { say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';

const M = 1_000_000;

describe('cost arithmetic', () => {
  const usageOf = (input: number, output: number, write: number, read: number) => ({
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
  });

  it('prices each component on its own, with Anthropic cache ratios by default', () => {
    const price = { input: 3, output: 15 };
    expect(costOf(price, usageOf(M, 0, 0, 0))).toBeCloseTo(3, 10);
    expect(costOf(price, usageOf(0, M, 0, 0))).toBeCloseTo(15, 10);
    expect(costOf(price, usageOf(0, 0, M, 0))).toBeCloseTo(3.75, 10);
    expect(costOf(price, usageOf(0, 0, 0, M))).toBeCloseTo(0.3, 10);
    expect(costOf(price, usageOf(1000, 500, 2000, 10_000))).toBeCloseTo((1000 * 3 + 500 * 15 + 2000 * 3.75 + 10_000 * 0.3) / M, 12);
  });

  it('uses explicit cache prices when a model has them', () => {
    expect(costOf({ input: 2.5, output: 10, cacheWrite: 2.5, cacheRead: 1.25 }, usageOf(0, 0, M, M))).toBeCloseTo(3.75, 10);
  });

  it('finds prices by the longest matching prefix, configured ones first', () => {
    expect(findPrice('claude-haiku-4-5-20251001')).toEqual({ input: 1, output: 5 });
    expect(findPrice('claude-3-5-haiku-20241022')).toEqual({ input: 0.8, output: 4 });
    expect(findPrice('claude-opus-4-1-20250805')).toEqual({ input: 15, output: 75 });
    // The config defaults (kernel/resolved-config.ts DEFAULTS) are priced.
    expect(findPrice('claude-sonnet-5-5')).toEqual({ input: 3, output: 15 });
    expect(findPrice('claude-haiku-5-5')).toEqual({ input: 1, output: 5 });
    expect(findPrice('claude-opus-4-6')).toEqual({ input: 5, output: 25 });
    expect(findPrice('claude-opus-4-20250514')).toEqual({ input: 15, output: 75 });
    expect(findPrice('claude-3-opus-20240229')).toEqual({ input: 15, output: 75 });
    expect(findPrice('gpt-4o-mini-2024-07-18')?.input).toBe(0.15);
    expect(findPrice('llama3.1:8b')).toBeUndefined();
    expect(findPrice('llama3.1:8b', { llama: { input: 0, output: 0 } })).toEqual({ input: 0, output: 0 });
    expect(findPrice('claude-sonnet-5-5', { 'claude-sonnet-5': { input: 4, output: 20 } })).toEqual({ input: 4, output: 20 });
  });
});

describe('usage accounting', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  function build(config: Record<string, unknown> = {}) {
    const events: AgentEvent[] = [];
    const recorder = definePlugin(() => ({
      name: 'recorder',
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.hooks.event.tap('recorder', (e) => void events.push(e));
      },
    }))();
    const kernel = testKernel([recorder, queryAnthropic({ baseURL: server!.url }), queryService(), usage()], {
      model: 'claude-sonnet-5-5',
      smallModel: 'claude-haiku-5-5',
      ...config,
    });
    return { kernel, events };
  }

  const turnFor = (kernel: ReturnType<typeof build>['kernel'], session: Turn['session']): Turn => ({
    kernel,
    session,
    index: 0,
    signal: new AbortController().signal,
    data: new Map(),
    emit: (e) => kernel.emit(e),
  });

  it('totals main and small calls per session, per model and per tier, and prices the run', async () => {
    server = await startAnthropicServer([
      say('main answer', { usage: { input_tokens: 1000, output_tokens: 200, cache_creation_input_tokens: 3000, cache_read_input_tokens: 5000 } }),
      say('a summary that streams in pieces', { usage: { input_tokens: 400, output_tokens: 100 } }),
      say('direct', { usage: { input_tokens: 10, output_tokens: 10 } }),
    ]);
    const { kernel, events } = build();
    const session = await testSession(kernel);
    expect(kernel.state.get().contextWindow).toBe(200_000);
    const result = await runAgent(kernel, session, 'hello');

    const mainCost = (1000 * 3 + 200 * 15 + 3000 * 3.75 + 5000 * 0.3) / M;
    expect(result.costUsd).toBeCloseTo(mainCost, 12);
    expect(kernel.state.get().contextTokens).toBe(1000 + 200 + 3000 + 5000);

    const deltasBefore = events.filter((e) => e.type === 'text_delta').length;
    const summary = await kernel.services.require('query', 'test').ask(
      { tier: 'small', system: [{ type: 'text', text: 'Summarise.' }], messages: [{ role: 'user', content: 'x' }] },
      turnFor(kernel, session),
    );
    expect(summary.content[0]).toMatchObject({ type: 'text', text: 'a summary that streams in pieces' });
    // A direct small call through the hook (as compaction may make) is accounted as small too.
    await kernel.hooks.query.promise(
      { tier: 'small', model: session.smallModel, system: [], messages: [{ role: 'user', content: 'y' }], tools: [], maxTokens: 100 },
      turnFor(kernel, session),
    );
    expect(events.filter((e) => e.type === 'text_delta').length).toBe(deltasBefore);
    const smallRequests = server.messageRequests().slice(1);
    expect(smallRequests.map((r) => r.body.model)).toEqual(['claude-haiku-5-5', 'claude-haiku-5-5']);

    const smallCost = (400 * 1 + 100 * 5 + 10 * 1 + 10 * 5) / M;
    const state = kernel.state.get();
    expect(state.cost).toBeCloseTo(mainCost + smallCost, 12);
    expect(state.contextTokens).toBe(1000 + 200 + 3000 + 5000);
    expect(state.tokenUsage).toEqual({ input_tokens: 1410, output_tokens: 310, cache_creation_input_tokens: 3000, cache_read_input_tokens: 5000 });
    expect(state.usageByTier?.main).toMatchObject({ calls: 1 });
    expect(state.usageByTier?.small).toMatchObject({ calls: 2 });
    expect(state.usageByTier?.small.costUsd).toBeCloseTo(smallCost, 12);
    expect(Object.keys(state.usageByModel ?? {})).toEqual(['claude-sonnet-5-5', 'claude-haiku-5-5']);
    expect(state.usageByModel?.['claude-haiku-5-5'].tiers).toEqual(['small']);

    const book = kernel.services.require('usage', 'test').totals(session);
    expect(book.total.calls).toBe(3);
    expect(book.total.costUsd).toBeCloseTo(mainCost + smallCost, 12);
    const usageEvents = events.filter((e): e is Extract<AgentEvent, { type: 'usage' }> => e.type === 'usage');
    expect(usageEvents.map((e) => [e.tier, e.model])).toEqual([
      ['main', 'claude-sonnet-5-5'],
      ['small', 'claude-haiku-5-5'],
      ['small', 'claude-haiku-5-5'],
    ]);

    const report = String(await kernel.commands.get('cost')!.run('', { kernel, session, print: () => undefined, signal: new AbortController().signal }));
    expect(report).toContain(`Total cost:    $${(mainCost + smallCost).toFixed(4)}`);
    expect(report).toContain('claude-sonnet-5-5 (main): 1,000 input, 200 output, 5,000 cache read, 3,000 cache write');
    expect(report).toContain('claude-haiku-5-5 (small)');
    expect(report).toContain('Auxiliary (small model) calls: 2');
    expect(report).toContain('Context:       9,200 / 200,000 tokens (5%)');
  });

  it('prices new models from config `pricing`, honours config `contextWindow`, and counts unpriced models as $0', async () => {
    server = await startAnthropicServer([
      say('a', { usage: { input_tokens: M, output_tokens: 0 } }),
      say('b', { usage: { input_tokens: M, output_tokens: 0 } }),
      say('c'),
    ]);
    const { kernel, events } = build({ model: 'claude-future-9', pricing: { 'claude-future': { input: 7, output: 70 } }, contextWindow: 1_000_000 });
    const session = await testSession(kernel);
    expect(kernel.state.get().contextWindow).toBe(1_000_000);
    expect((await runAgent(kernel, session, 'x')).costUsd).toBeCloseTo(7, 10);

    const unpriced = await testSession(kernel, { model: 'mystery-model' });
    const result = await runAgent(kernel, unpriced, 'y');
    expect(result.costUsd).toBe(0);
    await runAgent(kernel, unpriced, 'again');
    const logs = events.filter((e): e is Extract<AgentEvent, { type: 'log' }> => e.type === 'log' && e.source === 'usage');
    // One warning per model, naming the config key that fixes it.
    expect(logs.map((e) => [e.level, e.message])).toEqual([
      ['warn', 'no price known for model "mystery-model": its cost is reported as $0; set it under `pricing` in agent.config.ts (USD per million tokens)'],
    ]);
    const report = String(await kernel.commands.get('cost')!.run('', { kernel, session: unpriced, print: () => undefined, signal: new AbortController().signal }));
    expect(report).toContain('mystery-model (main)');
    expect(report).toContain('no price known');
  });

  it('rejects a bad pricing entry naming the key', async () => {
    server = await startAnthropicServer([]);
    expect(() => build({ pricing: { x: { input: -1, output: 1 } } })).toThrow(/config pricing\.x\.input: Too small/);
  });
});
