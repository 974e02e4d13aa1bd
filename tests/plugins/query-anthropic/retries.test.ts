import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, runAgent, type RunResult } from '../../../kernel/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer, type ScriptStep } from '../../helpers/anthropic-server.js';
import { testSession } from '../../helpers/kernel.js';
import { FakeClock, until } from '../query-retry/fake-clock.js';
import { harness, type Harness } from './setup.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(script: ScriptStep[], clock?: FakeClock): Promise<{ h: Harness; result: RunResult }> {
  server = await startAnthropicServer(script);
  const h = harness(server.url, { clock });
  const session = await testSession(h.kernel);
  const result = await runAgent(h.kernel, session, 'go');
  return { h, result };
}

const overloaded = { status: 529, errorMessage: 'Overloaded' };

describe('query-anthropic retries', () => {
  it('retries 529 twice with 1 s then 2 s backoff and answers', async () => {
    const { h, result } = await run([overloaded, overloaded, say('finally')]);
    expect(result.result).toBe('finally');
    expect(server!.messageRequests()).toHaveLength(3);
    expect(h.clock.sleeps).toEqual([1000, 2000]);
    const retries = h.of('retry');
    expect(retries.map((r) => [r.attempt, r.maxRetries, r.delayMs])).toEqual([
      [1, 3, 1000],
      [2, 3, 2000],
    ]);
    expect(retries[0].cause).toBe('HTTP 529 overloaded_error: Overloaded');
  });

  it.each([408, 409, 500, 502, 503, 504])('retries HTTP %i once with backoff', async (status) => {
    const { h, result } = await run([{ status }, say('ok')]);
    expect(result.result).toBe('ok');
    expect(server!.messageRequests()).toHaveLength(2);
    expect(h.clock.sleeps).toEqual([1000]);
    expect(h.of('retry')[0].cause).toContain(`HTTP ${status}`);
  });

  it('gives up after 3 retries (one shared counter) with a clear error', async () => {
    const { h, result } = await run([{ status: 500 }, overloaded, { fault: 'reset' }, overloaded, say('never')]);
    expect(result.isError).toBe(true);
    expect(result.error).toContain('Anthropic API: HTTP 529 overloaded_error: Overloaded (gave up after 3 retries)');
    expect(server!.messageRequests()).toHaveLength(4);
    expect(h.clock.sleeps).toEqual([1000, 2000, 4000]);
    expect(h.of('retry').map((r) => r.attempt)).toEqual([1, 2, 3]);
  });

  it('waits exactly retry-after-ms on 429', async () => {
    const { h, result } = await run([{ status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '9' } }, say('ok')]);
    expect(result.result).toBe('ok');
    expect(h.clock.sleeps).toEqual([1500]);
    expect(h.of('retry')[0]).toMatchObject({ delayMs: 1500, cause: expect.stringContaining('HTTP 429 rate_limit_error') });
  });

  it('waits retry-after seconds on 429', async () => {
    const { h } = await run([{ status: 429, headers: { 'retry-after': '7' } }, say('ok')]);
    expect(h.clock.sleeps).toEqual([7000]);
  });

  it('waits until a retry-after HTTP date on 429', async () => {
    const start = Date.UTC(2030, 0, 1, 12, 0, 0);
    const clock = new FakeClock({ start });
    const { h } = await run([{ status: 429, headers: { 'retry-after': new Date(start + 5000).toUTCString() } }, say('ok')], clock);
    expect(h.clock.sleeps).toEqual([5000]);
  });

  it('falls back to backoff on a 429 without retry-after', async () => {
    const { h } = await run([{ status: 429 }, say('ok')]);
    expect(h.clock.sleeps).toEqual([1000]);
  });

  it('fails at once when 429 asks for more than 60 s', async () => {
    const { h, result } = await run([{ status: 429, headers: { 'retry-after': '120' } }, say('never')]);
    expect(result.isError).toBe(true);
    expect(result.error).toContain('the server asks to wait 120 s, longer than the 60 s Keel waits');
    expect(server!.messageRequests()).toHaveLength(1);
    expect(h.clock.sleeps).toEqual([]);
    expect(h.of('retry')).toEqual([]);
  });

  it('retries a connection reset before the headers', async () => {
    const { h, result } = await run([{ fault: 'reset' }, say('ok')]);
    expect(result.result).toBe('ok');
    expect(server!.messageRequests()).toHaveLength(2);
    expect(h.of('retry')[0].cause).toMatch(/^connection error/);
  });

  it('retries a malformed SSE stream', async () => {
    const { h, result } = await run([{ fault: 'malformed' }, say('ok')]);
    expect(result.result).toBe('ok');
    expect(server!.messageRequests()).toHaveLength(2);
    expect(h.of('retry')[0].cause).toMatch(/stream broke/);
  });

  it('withdraws the partial text of a stream cut mid-message and never runs its tool', async () => {
    const cut = { ...callTool('note', { text: 'partial' }, 'toolu_cut', 'Let me note that.'), fault: 'cut' as const };
    const { h, result } = await run([cut, callTool('note', { text: 'whole' }, 'toolu_ok', 'Let me note that.'), say('done')]);
    expect(result.result).toBe('done');
    expect(h.toolRuns).toEqual([{ text: 'whole' }]);
    const kinds = h.events.filter((e) => e.type === 'text_delta' || e.type === 'withdraw' || e.type === 'retry').map((e) => e.type);
    const firstWithdraw = kinds.indexOf('withdraw');
    expect(firstWithdraw).toBeGreaterThan(0);
    expect(kinds.slice(0, firstWithdraw).every((k) => k === 'text_delta')).toBe(true);
    expect(kinds[firstWithdraw + 1]).toBe('retry');
    expect(h.of('withdraw')).toHaveLength(1);
    expect(h.of('retry')[0].cause).toMatch(/^the response stream broke/);
    // The history holds only the complete message.
    const assistants = h.of('assistant_message');
    expect(assistants[0].response.content.map((b) => b.type)).toEqual(['text', 'tool_use']);
    expect(h.of('tool_start').map((e) => e.call.id)).toEqual(['toolu_ok']);
  });

  it('aborts and retries a stalled stream when the idle watchdog fires', async () => {
    server = await startAnthropicServer([{ fault: 'stall' }, say('ok')]);
    const h = harness(server.url);
    const session = await testSession(h.kernel);
    const running = runAgent(h.kernel, session, 'go');
    await until(() => h.clock.pending().includes(90_000), 'the idle watchdog');
    h.clock.advance(90_000);
    const result = await running;
    expect(result.result).toBe('ok');
    expect(server.messageRequests()).toHaveLength(2);
    expect(await server.messageRequests()[0].finished).toBe('closed-early');
    expect(h.of('retry')[0]).toMatchObject({ attempt: 1, delayMs: 1000, cause: 'the stream stalled (no event for 90 s)' });
  });

  it('aborts and retries when no response arrives within the first-byte timeout', async () => {
    server = await startAnthropicServer([{ fault: 'hang' }, say('ok')]);
    const h = harness(server.url);
    const session = await testSession(h.kernel);
    const running = runAgent(h.kernel, session, 'go');
    await until(() => server!.messageRequests().length === 1 && h.clock.pending().includes(120_000), 'the first request');
    h.clock.advance(120_000);
    const result = await running;
    expect(result.result).toBe('ok');
    expect(h.of('retry')[0].cause).toBe('no response within 120 s');
  });
});

describe('query-anthropic failures that are not retried', () => {
  it('fails at once on 401 with invalid-API-key wording', async () => {
    const { h, result } = await run([{ status: 401, errorMessage: 'invalid x-api-key' }, say('never')]);
    expect(result.isError).toBe(true);
    expect(result.error).toMatch(/^invalid API key: the Anthropic API answered 401/);
    expect(server!.messageRequests()).toHaveLength(1);
    expect(h.of('retry')).toEqual([]);
  });

  it('fails at once on 403 with permission wording', async () => {
    const { result } = await run([{ status: 403, errorMessage: 'not allowed' }, say('never')]);
    expect(result.error).toMatch(/^permission denied: .*403.*not allowed/);
    expect(server!.messageRequests()).toHaveLength(1);
  });

  it('routes 400 prompt-is-too-long to compaction, then answers', async () => {
    let compactions = 0;
    const compactor = definePlugin(() => ({
      name: 'fake-compaction',
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.services.provide('compaction', {
          async compact() {
            compactions++;
            return true;
          },
        });
      },
    }))();
    server = await startAnthropicServer([{ status: 400, errorMessage: 'prompt is too long: 210000 tokens > 200000 maximum' }, say('fits now')]);
    const h = harness(server.url, { extra: [compactor] });
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go');
    expect(result.result).toBe('fits now');
    expect(compactions).toBe(1);
    expect(h.of('retry')).toEqual([]);
    expect(server.messageRequests()).toHaveLength(2);
  });
});

describe('query-anthropic abort', () => {
  it('stops the HTTP stream on abort and runs no tool from the partial message', async () => {
    server = await startAnthropicServer([
      { ...callTool('note', { text: 'x' }, 'toolu_1', 'A long preamble that streams slowly before the tool call.'), eventDelayMs: 40 },
    ]);
    const controller = new AbortController();
    const escOnText = definePlugin(() => ({
      name: 'esc-on-text',
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.hooks.event.tap('esc-on-text', (event) => {
          if (event.type === 'text_delta') controller.abort(new Error('user pressed Esc'));
        });
      },
    }))();
    const h = harness(server.url, { extra: [escOnText] });
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go', { signal: controller.signal });
    expect(result.aborted).toBe(true);
    expect(h.toolRuns).toEqual([]);
    expect(h.of('tool_start')).toEqual([]);
    expect(await server.messageRequests()[0].finished).toBe('closed-early');
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('an abort during a retry wait ends the call without another attempt', async () => {
    const clock = new FakeClock({ holdSleeps: true });
    server = await startAnthropicServer([overloaded, say('never')]);
    const h = harness(server.url, { clock });
    const controller = new AbortController();
    const running = runAgent(h.kernel, await testSession(h.kernel), 'go', { signal: controller.signal });
    await until(() => clock.heldSleeps() === 1, 'the retry wait');
    controller.abort(new Error('user pressed Esc'));
    const result = await running;
    expect(result.aborted).toBe(true);
    expect(server.messageRequests()).toHaveLength(1);
  });
});
