/**
 * A run's signal lives for the whole run: each request must leave no listener on it (nor on the retry policy's
 * per-attempt signals) once its response has been read, and aborting still stops a stream at once.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, runAgent, type Plugin } from '../../../kernel/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { harness, toolbox } from './setup.js';
import { until } from '../../helpers/until.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Counts the abort listeners on `signal` after every turn. */
const counter = (signal: AbortSignal, counts: number[]): Plugin =>
  definePlugin(() => ({
    name: 'count',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.hooks.postTurn.tapPromise('count', async () => void counts.push(getEventListeners(signal, 'abort').length));
    },
  }))();

const script = () => [callTool('note', { text: 'one' }, 'toolu_1'), callTool('note', { text: 'two' }, 'toolu_2'), callTool('note', { text: 'three' }, 'toolu_3'), say('done')];

describe('abort listeners', () => {
  it('leaves none on the run signal after each request, without the retry service', async () => {
    server = await startAnthropicServer(script());
    const controller = new AbortController();
    const counts: number[] = [];
    const kernel = testKernel([queryAnthropic(), toolbox([]), counter(controller.signal, counts)], { baseURL: server.url });
    const result = await runAgent(kernel, await testSession(kernel), 'go', { signal: controller.signal });
    expect(result.result).toBe('done');
    expect(counts).toHaveLength(4);
    // the loop's own listener, at most; never one more per request
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBeLessThanOrEqual(1);
  });

  it('leaves none on the run signal after each request, with the retry service', async () => {
    server = await startAnthropicServer(script());
    const controller = new AbortController();
    const counts: number[] = [];
    const h = harness(server.url, { extra: [counter(controller.signal, counts)] });
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'go', { signal: controller.signal });
    expect(result.result).toBe('done');
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBeLessThanOrEqual(1);
  });

  it('stops a stream at once when the run is aborted mid-answer, and reports an abort', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    server = await startAnthropicServer([say('a long answer', { beforeEvent: (ctx) => (ctx.index === 4 ? held : undefined) })]);
    const kernel = testKernel([queryAnthropic(), toolbox([])], { baseURL: server.url });
    const controller = new AbortController();
    kernel.observe((event) => {
      if (event.type === 'text_delta') controller.abort();
    });
    const result = await runAgent(kernel, await testSession(kernel), 'go', { signal: controller.signal });
    // The server is still holding the rest of the stream: the run ended without waiting for it.
    release();
    expect(result).toMatchObject({ subtype: 'error_during_execution', aborted: true });
  });

  it('reports an abort, not a connection failure, when the run is aborted before the headers', async () => {
    server = await startAnthropicServer([{ fault: 'hang' }]);
    const kernel = testKernel([queryAnthropic(), toolbox([])], { baseURL: server.url });
    const controller = new AbortController();
    const running = runAgent(kernel, await testSession(kernel), 'go', { signal: controller.signal });
    await until(() => server!.messageRequests().length > 0, "the request to reach the server");
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ subtype: 'error_during_execution', aborted: true });
  });
});
