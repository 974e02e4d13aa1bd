import { afterEach, describe, expect, it, vi } from 'vitest';
import { definePlugin, runAgent, type RunResult } from '../../../kernel/index.js';
import { callTool, say, startAnthropicServer, type BeforeEvent, type ScriptedServer, type ScriptStep } from '../../helpers/anthropic-server.js';
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
    // The reset hits a kept-alive connection before any response byte: it is sent again at once, outside the count.
    const { h, result } = await run([{ status: 500 }, overloaded, { fault: 'reset' }, overloaded, overloaded, say('never')]);
    expect(result.isError).toBe(true);
    expect(result.error).toContain('Anthropic API: HTTP 529 overloaded_error: Overloaded (gave up after 3 retries)');
    expect(server!.messageRequests()).toHaveLength(5);
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

  it("retries a malformed SSE stream, keeping the SDK's own complaint off the console", async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const { h, result } = await run([{ fault: 'malformed' }, say('ok')]);
    expect(consoleError).not.toHaveBeenCalled();
    consoleError.mockRestore();
    expect(h.of('log').some((e) => e.level === 'debug' && e.message.includes('Could not parse message into JSON'))).toBe(true);
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
    // Tool input streams as it arrives, tagged with its call id.
    const inputOk = h.of('tool_input_delta').filter((e) => e.toolUseId === 'toolu_ok');
    expect(inputOk.length).toBeGreaterThan(1);
    expect(inputOk.map((e) => e.partialJson).join('')).toBe('{"text":"whole"}');
  });

  it('aborts and retries a stalled stream when the idle watchdog fires', async () => {
    server = await startAnthropicServer([{ fault: 'stall' }, say('ok')]);
    const h = harness(server.url);
    const session = await testSession(h.kernel);
    const running = runAgent(h.kernel, session, 'go');
    await until(() => h.clock.pending().includes(60_000), 'the idle watchdog');
    h.clock.advance(60_000);
    const result = await running;
    expect(result.result).toBe('ok');
    expect(server.messageRequests()).toHaveLength(2);
    expect(await server.messageRequests()[0].finished).toBe('closed-early');
    expect(h.of('retry')[0]).toMatchObject({ attempt: 1, delayMs: 1000, cause: 'the stream stalled (no event for 60 s)' });
  });

  it('keeps a slow stream alive while the server sends pings (bytes feed the idle watchdog, not parsed events)', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held: BeforeEvent | undefined;
    // Held before content_block_start (event 2), after message_start and the first ping.
    server = await startAnthropicServer([say('slow but steady', { beforeEvent: (ctx) => (ctx.index === 2 ? ((held = ctx), released) : undefined) })]);
    const h = harness(server.url);
    const running = runAgent(h.kernel, await testSession(h.kernel), 'go');
    await until(() => held !== undefined && h.clock.deadlines().includes(60_000), 'the stream to go quiet');
    h.clock.advance(40_000);
    // The SDK drops pings before any event listener sees them; the watchdog must still count them.
    await held!.write('event: ping\ndata: {"type": "ping"}\n\n');
    await until(() => h.clock.deadlines().includes(100_000), 'the watchdog to re-arm on the ping');
    h.clock.advance(40_000); // 80 s since the last content event, 40 s since the ping
    release();
    const result = await running;
    expect(result.result).toBe('slow but steady');
    expect(server.messageRequests()).toHaveLength(1);
    expect(h.of('retry')).toEqual([]);
  });

  it('retries an error event that arrives mid-stream and withdraws the text already shown', async () => {
    const overloadedEvent = 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n';
    server = await startAnthropicServer([
      say('Half an answer', { beforeEvent: (ctx) => (ctx.index === 4 ? ctx.write(overloadedEvent).then(() => ctx.closed) : undefined) }),
      say('A whole answer'),
    ]);
    const h = harness(server.url);
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go');
    expect(result.result).toBe('A whole answer');
    expect(server.messageRequests()).toHaveLength(2);
    expect(h.of('withdraw')).toHaveLength(1);
    expect(h.of('retry')).toHaveLength(1);
    expect(h.of('retry')[0].cause).toMatch(/^the response stream broke: .*overloaded_error/);
    expect(h.clock.sleeps).toEqual([1000]);
  });

  it('does not retry an error event mid-stream that blames the request itself', async () => {
    const invalidEvent = 'event: error\ndata: {"type": "error", "error": {"type": "invalid_request_error", "message": "tool_use ids must be unique"}}\n\n';
    server = await startAnthropicServer([
      say('Half an answer', { beforeEvent: (ctx) => (ctx.index === 4 ? ctx.write(invalidEvent).then(() => ctx.closed) : undefined) }),
      say('never sent'),
    ]);
    const h = harness(server.url);
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go');
    expect(result.subtype).toBe('error_during_execution');
    expect(result.error).toMatch(/tool_use ids must be unique/);
    expect(server.messageRequests()).toHaveLength(1);
    expect(h.of('retry')).toHaveLength(0);
    expect(h.of('withdraw')).toHaveLength(1);
  });

  it('aborts and retries when no response arrives within the first-byte timeout', async () => {
    server = await startAnthropicServer([{ fault: 'hang' }, say('ok')]);
    const h = harness(server.url);
    const session = await testSession(h.kernel);
    const running = runAgent(h.kernel, session, 'go');
    await until(() => server!.messageRequests().length === 1 && h.clock.pending().includes(30_000), 'the first request');
    h.clock.advance(30_000);
    const result = await running;
    expect(result.result).toBe('ok');
    expect(h.of('retry')[0].cause).toBe('no response within 30 s');
  });
});

describe('query-anthropic timeouts and answers that are not a stream', () => {
  /** Fires each attempt's watchdog in turn until the run settles. */
  async function exhaust(h: Harness, running: Promise<RunResult>, ms: number, attempts: number): Promise<RunResult> {
    for (let n = 1; n <= attempts; n++) {
      await until(() => server!.messageRequests().length === n && h.clock.pending().includes(ms), `attempt ${n}`);
      h.clock.advance(ms);
    }
    return running;
  }

  it('reports an endpoint that never answers as a timeout (how long, how many attempts), not as a user abort', async () => {
    server = await startAnthropicServer([{ fault: 'hang' }, { fault: 'hang' }, { fault: 'hang' }, { fault: 'hang' }]);
    const h = harness(server.url);
    const result = await exhaust(h, runAgent(h.kernel, await testSession(h.kernel), 'go'), 30_000, 4);
    expect(result.aborted).toBeUndefined();
    expect(result.isError).toBe(true);
    // 4 × 30 s of waiting for headers plus 1 + 2 + 4 s of backoff.
    expect(result.error).toBe('Anthropic API timed out: no response within 30 s (4 attempts over 2 min 7 s)');
  });

  it('reports a stream that stalls after its headers on every attempt as a timeout', async () => {
    server = await startAnthropicServer([{ fault: 'stall' }, { fault: 'stall' }, { fault: 'stall' }, { fault: 'stall' }]);
    const h = harness(server.url);
    const result = await exhaust(h, runAgent(h.kernel, await testSession(h.kernel), 'go'), 60_000, 4);
    expect(result.aborted).toBeUndefined();
    expect(result.error).toMatch(/^Anthropic API timed out: the stream stalled \(no event for 60 s\) \(4 attempts over /);
  });

  it('ends a stream that sends only pings at the progress deadline, without a retry', async () => {
    const ping = 'event: ping\ndata: {"type": "ping"}\n\n';
    let held: BeforeEvent | undefined;
    server = await startAnthropicServer([{ ...say('never'), beforeEvent: (ctx) => (ctx.index === 1 ? ((held = ctx), ctx.closed) : undefined) }, say('unused')]);
    const h = harness(server.url);
    const running = runAgent(h.kernel, await testSession(h.kernel), 'go');
    // Pings every 50 s keep the idle watchdog (60 s) happy forever; only the progress deadline (120 s) ends it.
    for (let t = 50_000; t <= 150_000; t += 50_000) {
      await until(() => held !== undefined && h.clock.deadlines().includes(t + 10_000), `the idle watchdog at ${t + 10_000}`);
      h.clock.advance(50_000);
      await held!.write(ping);
    }
    const result = await running;
    expect(result.aborted).toBeUndefined();
    expect(result.error).toBe('Anthropic API timed out: no content for 120 s (the server sent only keep-alives) (1 attempt over 2 min 30 s)');
    expect(server.messageRequests()).toHaveLength(1);
    expect(h.of('retry')).toEqual([]);
  });

  it('progressTimeoutMs is configurable under `retry`', async () => {
    server = await startAnthropicServer([say('ok')]);
    const h = harness(server.url, { config: { retry: { progressTimeoutMs: 5_000 } } as never });
    expect(h.kernel.services.get('retry')!.settings.progressTimeoutMs).toBe(5_000);
  });

  it('says what came back when a 200 answer is an HTML page instead of an event stream', async () => {
    const page = '<html><head><title>Captive portal</title></head><body>Please log in</body></html>';
    server = await startAnthropicServer([{ raw: { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: page } }, say('unused')]);
    const h = harness(server.url);
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go');
    expect(result.error).toContain('the Anthropic API answered HTTP 200 with content-type text/html; charset=utf-8 instead of an event stream');
    expect(result.error).toContain('the body begins: "<html><head><title>Captive portal');
    expect(result.error).not.toContain('without sending any chunks');
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('says what came back when a 200 answer is JSON that is not valid', async () => {
    server = await startAnthropicServer([{ raw: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"id": "msg_1", "content": [' } }]);
    const h = harness(server.url);
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go');
    expect(result.error).toContain('HTTP 200 with content-type application/json instead of an event stream; the body begins: "{\\"id\\": \\"msg_1\\", \\"content\\": ["');
  });

  it('never runs a tool call whose input JSON arrived cut off: the stream is retried', async () => {
    server = await startAnthropicServer([{ ...callTool('note', { text: 'half of a long note' }, 'toolu_cut'), fault: 'partial-input' }, callTool('note', { text: 'whole' }, 'toolu_ok'), say('done')]);
    const h = harness(server.url);
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go');
    expect(result.result).toBe('done');
    expect(h.toolRuns).toEqual([{ text: 'whole' }]);
    expect(h.of('retry')[0].cause).toMatch(/the input of tool call "note" \(toolu_cut\) did not arrive whole/);
    expect(h.of('withdraw')).toHaveLength(1);
  });

  it('fails without running anything when every attempt cuts the tool input', async () => {
    const cut = { ...callTool('note', { text: 'never whole' }), fault: 'partial-input' as const };
    server = await startAnthropicServer([cut, cut, cut, cut]);
    const h = harness(server.url);
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go');
    expect(result.isError).toBe(true);
    expect(result.error).toMatch(/did not arrive whole .*\(gave up after 3 retries\)/);
    expect(h.toolRuns).toEqual([]);
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
  /** Esc as the user presses it: the first event of `type` aborts the run. */
  const escOn = (type: 'text_delta' | 'tool_input_delta', controller: AbortController) =>
    definePlugin(() => ({
      name: 'esc',
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.hooks.event.tap('esc', (event) => {
          if (event.type === type) controller.abort(new Error('user pressed Esc'));
        });
      },
    }))();

  /** Holds the stream before event `index` until the client closes the connection: nothing after it is ever sent. */
  const holdBefore = (index: number) => (ctx: BeforeEvent) => (ctx.index === index ? ctx.closed : undefined);

  it('closes the HTTP stream before the next event when the user aborts mid-text, and runs no tool', async () => {
    // message_start, ping, content_block_start, text_delta (index 3): the server holds before event 4.
    server = await startAnthropicServer([{ ...callTool('note', { text: 'x' }, 'toolu_1', 'A preamble before the tool call.'), beforeEvent: holdBefore(4) }]);
    const controller = new AbortController();
    const h = harness(server.url, { extra: [escOn('text_delta', controller)] });
    const session = await testSession(h.kernel);
    const result = await runAgent(h.kernel, session, 'go', { signal: controller.signal });
    expect(result).toMatchObject({ aborted: true, subtype: 'error_during_execution' });
    // The server saw the connection close while it held event 4: the abort reached the wire, not only the parser.
    const request = server.messageRequests()[0];
    expect(await request.finished).toBe('closed-early');
    expect(request.eventsSent).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta']);
    expect(h.toolRuns).toEqual([]);
    expect(h.of('tool_start')).toEqual([]);
    expect(h.of('assistant_message')).toEqual([]);
    expect(session.messages).toEqual([{ role: 'user', content: 'go' }]);
    expect(server.messageRequests()).toHaveLength(1);
    expect(h.of('retry')).toEqual([]);
  });

  it('an abort while a tool call streams its input runs no half tool call', async () => {
    // message_start, ping, content_block_start (tool_use), input_json_delta (index 3): held before the rest of the input.
    server = await startAnthropicServer([{ ...callTool('note', { text: 'half' }, 'toolu_half'), beforeEvent: holdBefore(4) }]);
    const controller = new AbortController();
    const h = harness(server.url, { extra: [escOn('tool_input_delta', controller)] });
    const session = await testSession(h.kernel);
    const result = await runAgent(h.kernel, session, 'go', { signal: controller.signal });
    expect(result.aborted).toBe(true);
    expect(await server.messageRequests()[0].finished).toBe('closed-early');
    expect(server.messageRequests()[0].eventsSent).toHaveLength(4);
    expect(h.of('tool_input_delta')[0]).toMatchObject({ toolUseId: 'toolu_half' });
    expect(h.toolRuns).toEqual([]);
    expect(h.of('tool_start')).toEqual([]);
    expect(session.messages).toHaveLength(1);
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
