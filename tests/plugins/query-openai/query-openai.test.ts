import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, runAgent, type AgentEvent, type Plugin } from '../../../kernel/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import queryOpenAI from '../../../plugins/query-openai/index.js';
import { buildChatParams } from '../../../plugins/query-openai/query.js';
import queryRetry from '../../../plugins/query-retry/index.js';
import usage from '../../../plugins/usage/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { chatCallTools, chatSay, startOpenAIServer, type ChatStep, type ScriptedChatServer } from '../../helpers/openai-server.js';
import { toolbox } from '../query-anthropic/setup.js';
import { FakeClock, until } from '../query-retry/fake-clock.js';

let server: ScriptedChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(script: ChatStep[], extra: Plugin[] = []) {
  server = await startOpenAIServer(script);
  const clock = new FakeClock();
  const events: AgentEvent[] = [];
  const toolRuns: unknown[] = [];
  const recorder = definePlugin(() => ({
    name: 'recorder',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.hooks.event.tap('recorder', (e) => void events.push(e));
    },
  }))();
  const kernel = testKernel([recorder, queryRetry({ clock }), queryAnthropic(), queryOpenAI(), usage(), toolbox(toolRuns), ...extra], {
    provider: 'openai',
    baseURL: server.url,
    apiKey: 'sk-test',
    model: 'gpt-4o',
    smallModel: 'gpt-4o-mini',
  });
  const session = await testSession(kernel);
  const of = <T extends AgentEvent['type']>(type: T) => events.filter((e) => e.type === type) as Array<Extract<AgentEvent, { type: T }>>;
  return { kernel, session, clock, events, toolRuns, of };
}

describe('query-openai', () => {
  it('streams text, maps stop to end_turn, and accounts usage with cached tokens', async () => {
    const { kernel, session, of } = await setup([chatSay('Hello from a local model', { usage: { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 400 } })]);
    const result = await runAgent(kernel, session, 'hi');
    expect(result.result).toBe('Hello from a local model');
    expect(result.stopReason).toBe('end_turn');
    expect(of('text_delta').map((e) => e.text).join('')).toBe('Hello from a local model');
    expect(of('text_delta').length).toBeGreaterThan(1);
    expect(result.usage).toEqual({ input_tokens: 600, output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 400 });
    expect(result.costUsd).toBeCloseTo((600 * 2.5 + 100 * 10 + 400 * 1.25) / 1e6, 12);
    const body = server!.completionRequests()[0].body;
    expect(body).toMatchObject({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, max_tokens: 16384 });
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'hi' });
    expect(server!.completionRequests()[0].headers.authorization).toBe('Bearer sk-test');
  });

  it('runs parallel tool calls and sends the results back as tool messages', async () => {
    const { kernel, session, toolRuns, of } = await setup([
      { text: 'Two notes.', toolCalls: [{ id: 'call_a', name: 'note', arguments: { text: 'one' } }, { id: 'call_b', name: 'look', arguments: { path: 'src' } }] },
      chatSay('Both done.'),
    ]);
    const result = await runAgent(kernel, session, 'note and look');
    expect(result.result).toBe('Both done.');
    expect(toolRuns).toEqual([{ text: 'one' }]);
    expect(of('tool_end').map((e) => [e.call.id, e.result.content])).toEqual(
      expect.arrayContaining([
        ['call_a', 'noted one'],
        ['call_b', 'looked at src'],
      ]),
    );
    const [first, second] = server!.completionRequests().map((r) => r.body);
    expect(first.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['note', 'look']);
    expect(first.tools[0]).toMatchObject({ type: 'function', function: { name: 'note', description: 'Record a note.', parameters: { type: 'object' } } });
    expect(second.messages.slice(-3)).toEqual([
      {
        role: 'assistant',
        content: 'Two notes.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'note', arguments: '{"text":"one"}' } },
          { id: 'call_b', type: 'function', function: { name: 'look', arguments: '{"path":"src"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'noted one' },
      { role: 'tool', tool_call_id: 'call_b', content: 'looked at src' },
    ]);
    const assistant = of('assistant_message')[0].response;
    expect(assistant.stopReason).toBe('tool_use');
    expect(assistant.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
  });

  it('treats tool calls under a plain `stop` as tool_use and marks failed results as errors', async () => {
    const { kernel, session } = await setup([
      { toolCalls: [{ id: 'call_x', name: 'missing_tool', arguments: {} }], finishReason: 'stop' },
      chatSay('ok'),
    ]);
    const result = await runAgent(kernel, session, 'x');
    expect(result.result).toBe('ok');
    const tool = server!.completionRequests()[1].body.messages.at(-1);
    expect(tool.role).toBe('tool');
    expect(tool.content).toMatch(/^Error: Unknown tool "missing_tool"/);
  });

  it('maps length to max_tokens and content_filter to refusal', async () => {
    const a = await setup([chatSay('cut', { finishReason: 'content_filter' })]);
    const refused = await runAgent(a.kernel, a.session, 'x');
    expect(refused.refusal).toBe(true);
    await server!.close();
    const b = await setup([chatSay('partial', { finishReason: 'length' }), chatSay('rest')]);
    await runAgent(b.kernel, b.session, 'x');
    expect(b.of('assistant_message')[0].response.stopReason).toBe('max_tokens');
  });

  it('uses the shared retry service: 503 then a stream cut mid-message, withdrawn and retried', async () => {
    const { kernel, session, clock, of } = await setup([{ status: 503 }, chatSay('partial answer that breaks', { fault: 'cut' }), chatSay('whole answer')]);
    const result = await runAgent(kernel, session, 'x');
    expect(result.result).toBe('whole answer');
    expect(server!.completionRequests()).toHaveLength(3);
    expect(clock.sleeps).toEqual([1000, 2000]);
    expect(of('retry').map((e) => e.cause)).toEqual([expect.stringContaining('HTTP 503'), expect.stringMatching(/^the response stream broke/)]);
    expect(of('withdraw')).toHaveLength(1);
  });

  it('never runs a tool call from a stream that ended without a finish reason', async () => {
    const { kernel, session, toolRuns } = await setup([
      { toolCalls: [{ id: 'call_p', name: 'note', arguments: { text: 'partial' } }], finishReason: null },
      { toolCalls: [{ id: 'call_w', name: 'note', arguments: { text: 'whole' } }] },
      chatSay('done'),
    ]);
    const result = await runAgent(kernel, session, 'x');
    expect(result.result).toBe('done');
    expect(toolRuns).toEqual([{ text: 'whole' }]);
  });

  it('retries a malformed stream and a stalled one', async () => {
    const { kernel, session, clock, of } = await setup([{ fault: 'malformed' }, { fault: 'stall' }, chatSay('fine')]);
    const running = runAgent(kernel, session, 'x');
    await until(() => server!.completionRequests().length === 2 && clock.pending().includes(60_000), 'the stalled stream');
    clock.advance(60_000);
    expect((await running).result).toBe('fine');
    expect(of('retry').map((e) => e.attempt)).toEqual([1, 2]);
  });

  it("keeps a slow stream alive on the server's keep-alive comments (the idle watchdog counts bytes)", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let write: ((raw: string) => Promise<void>) | undefined;
    const { kernel, session, clock, of } = await setup([
      chatSay('slow model', { beforeChunk: (ctx) => (ctx.index === 1 ? ((write = ctx.write), released) : undefined) }),
    ]);
    const running = runAgent(kernel, session, 'x');
    await until(() => write !== undefined && clock.deadlines().includes(60_000), 'the stream to go quiet');
    clock.advance(40_000);
    // OpenRouter-style keep-alive: an SSE comment the client never turns into a chunk.
    await write!(': OPENROUTER PROCESSING\n\n');
    await until(() => clock.deadlines().includes(100_000), 'the watchdog to re-arm on the comment');
    clock.advance(40_000);
    release();
    expect((await running).result).toBe('slow model');
    expect(server!.completionRequests()).toHaveLength(1);
    expect(of('retry')).toEqual([]);
  });

  it('fails at once on 401 with invalid-API-key wording', async () => {
    const { kernel, session, of } = await setup([{ status: 401, errorMessage: 'Incorrect API key provided' }]);
    const result = await runAgent(kernel, session, 'x');
    expect(result.error).toMatch(/invalid API key: the OpenAI-compatible server answered 401 \(Incorrect API key provided\)/);
    expect(of('retry')).toEqual([]);
  });

  it('routes a context-length 400 to compaction', async () => {
    let compactions = 0;
    const compactor = definePlugin(() => ({
      name: 'fake-compaction',
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.services.provide('compaction', { compact: async () => ++compactions > 0 });
      },
    }))();
    const { kernel, session } = await setup(
      [{ status: 400, errorMessage: "This model's maximum context length is 8192 tokens." }, chatSay('fits')],
      [compactor],
    );
    expect((await runAgent(kernel, session, 'x')).result).toBe('fits');
    expect(compactions).toBe(1);
  });

  it('answers only when provider is openai', async () => {
    server = await startOpenAIServer([]);
    const kernel = testKernel([queryOpenAI({ baseURL: server.url })], { provider: 'anthropic' });
    const session = await testSession(kernel);
    const result = await runAgent(kernel, session, 'x');
    expect(result.error).toMatch(/no plugin answered the query hook/);
    expect(server.completionRequests()).toHaveLength(0);
  });
});

describe('translation', () => {
  it('turns system blocks, images, error results and thinking into Chat Completions shapes', () => {
    const params = buildChatParams(
      {
        tier: 'main',
        model: 'm',
        maxTokens: 100,
        tools: [],
        system: [
          { type: 'text', text: 'You are Keel.' },
          { type: 'text', text: '<env>x</env>' },
        ],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 's' },
              { type: 'tool_use', id: 't1', name: 'bash', input: { command: 'false' } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'exit 1' }], is_error: true }, { type: 'text', text: 'why?' }] },
        ],
      },
      { maxTokensField: 'max_completion_tokens' },
    );
    expect(params.max_completion_tokens).toBe(100);
    expect(params).not.toHaveProperty('max_tokens');
    expect(params).not.toHaveProperty('tools');
    expect(params.messages).toEqual([
      { role: 'system', content: 'You are Keel.\n\n<env>x</env>' },
      { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'bash', arguments: '{"command":"false"}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'Error: exit 1' },
      { role: 'user', content: 'why?' },
    ]);
  });
});
