import { describe, expect, it } from 'vitest';
import { runAgent, type MessageParam } from '../../../kernel/index.js';
import { prebuild, prebuildTools, splicePrebuilt } from '../../../plugins/query-anthropic/body.js';
import { callTool, say, startAnthropicServer } from '../../helpers/anthropic-server.js';
import { testSession } from '../../helpers/kernel.js';
import { harness } from './setup.js';

const history: MessageParam[] = [
  { role: 'user', content: 'hi "there" \u2028 é 😀 \ud800 lone' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt', n: 1, nested: { ok: true } } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'line\n\ttab\u0000nul' }] },
];

describe('pre-built messages', () => {
  it('give the very bytes JSON.stringify of the whole body gives, whatever the SDK puts around them', () => {
    const { messages, prebuilt } = prebuild(history, true);
    expect([...messages]).toEqual(history);
    const around = { model: 'm', max_tokens: 10, system: [{ type: 'text', text: 'sys' }], messages, tools: [{ name: 't' }], stream: true };
    const body = Buffer.concat(splicePrebuilt(JSON.stringify(around), [prebuilt]));
    expect(body.equals(Buffer.from(JSON.stringify({ ...around, messages: history }), 'utf8'))).toBe(true);
    expect(prebuild([]).prebuilt.chunks().map(String).join('')).toBe('[]');
  });

  it('give the SDK no messages to scan unless tracing wants them, with the same bytes on the wire', () => {
    const hidden = prebuild(history);
    expect(hidden.messages).toHaveLength(0);
    expect(prebuild(history, true).messages).toHaveLength(history.length);
    const around = { model: 'm', max_tokens: 10, messages: hidden.messages, stream: true };
    const body = Buffer.concat(splicePrebuilt(JSON.stringify(around), [hidden.prebuilt])).toString('utf8');
    expect(body).toBe(JSON.stringify({ ...around, messages: history }));
  });

  it('splice the tools beside the messages, each tool list serialised once', () => {
    const list = Object.freeze([{ name: 'a', description: 'é', input_schema: { type: 'object' } }, { name: 'b', cache_control: { type: 'ephemeral' } }]);
    const tools = prebuildTools(list);
    const messages = prebuild(history);
    expect([...tools.tools]).toEqual(list);
    const around = { model: 'm', messages: messages.messages, tools: tools.tools, stream: true };
    const body = Buffer.concat(splicePrebuilt(JSON.stringify(around), [messages.prebuilt, tools.prebuilt])).toString('utf8');
    expect(body).toBe(JSON.stringify({ ...around, messages: history, tools: list }));
    // Tools before messages in the body work as well: the parts are placed where their tokens are.
    const reordered = { tools: tools.tools, messages: messages.messages };
    expect(Buffer.concat(splicePrebuilt(JSON.stringify(reordered), [messages.prebuilt, tools.prebuilt])).toString('utf8')).toBe(JSON.stringify({ tools: list, messages: history }));
    expect(prebuildTools(list).prebuilt.chunks()[0]).toBe(tools.prebuilt.chunks()[0]);
  });

  it('grow by appending the new messages, and start again when a history diverges, leaving earlier bytes as they were', () => {
    const first: MessageParam = { role: 'user', content: 'start' };
    const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString('utf8');
    const turn = (n: number): MessageParam[] => [
      { role: 'assistant', content: [{ type: 'text', text: `answer ${n}` }] },
      { role: 'user', content: [{ type: 'text', text: `question ${n}` }] },
    ];
    let messages: MessageParam[] = [first];
    const sent: { chunks: Buffer[]; expected: string }[] = [];
    for (let n = 0; n < 5; n++) {
      messages = [...messages, ...turn(n)];
      // The latest message carries a breakpoint this turn (a copy), as placeBreakpoints makes it.
      const last = messages[messages.length - 1] as { content: { type: 'text'; text: string }[] };
      const marked = [...messages.slice(0, -1), { role: 'user', content: [{ ...last.content[0]!, cache_control: { type: 'ephemeral' } }] } as MessageParam];
      const chunks = prebuild(marked).prebuilt.chunks();
      sent.push({ chunks, expected: JSON.stringify(marked) });
    }
    // Rewritten (compacted) after the first message: a new buffer; every earlier request's bytes are intact.
    const rewritten: MessageParam[] = [first, { role: 'assistant', content: [{ type: 'text', text: 'summary' }] }];
    sent.push({ chunks: prebuild(rewritten).prebuilt.chunks(), expected: JSON.stringify(rewritten) });
    sent.push({ chunks: prebuild([...rewritten, ...turn(9)]).prebuilt.chunks(), expected: JSON.stringify([...rewritten, ...turn(9)]) });
    for (const { chunks, expected } of sent) expect(text(chunks)).toBe(expected);
  });

  it('serialise a message again when its content array is replaced', () => {
    const message: MessageParam = { role: 'user', content: [{ type: 'text', text: 'one' }] };
    const history: MessageParam[] = [{ role: 'user', content: 'first' }, message, { role: 'assistant', content: [{ type: 'text', text: 'a' }] }];
    const text = () => Buffer.concat(prebuild(history).prebuilt.chunks()).toString('utf8');
    expect(text()).toBe(JSON.stringify(history));
    (message as { content: MessageParam['content'] }).content = [{ type: 'text', text: 'two' }];
    expect(text()).toBe(JSON.stringify(history));
  });

  it('refuse a body without the placeholder rather than send no history', () => {
    const { prebuilt } = prebuild(history);
    expect(() => splicePrebuilt('{"messages":[]}', [prebuilt])).toThrow(/placeholder of a pre-built part exactly once/);
  });

  it('reach the server as the history, over several turns and tool calls', async () => {
    const server = await startAnthropicServer([callTool('note', { text: 'é 😀' }, 'toolu_a'), callTool('note', { text: 'two' }, 'toolu_b'), say('done')]);
    try {
      const h = harness(server.url);
      const result = await runAgent(h.kernel, await testSession(h.kernel), 'do "it"');
      expect(result.result).toBe('done');
      const requests = server.messageRequests();
      expect(requests.map((r) => r.body.messages.length)).toEqual([1, 3, 5]);
      for (const r of requests) expect(r.rawBody).toBe(JSON.stringify(r.body));
      expect(requests[2]!.body.messages[1].content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_a', input: { text: 'é 😀' } });
      expect(requests[2]!.rawBody).not.toContain('keel-prebuilt-messages');
      expect(requests[2]!.rawBody).not.toContain('keel-prebuilt-tools');
      expect(requests[2]!.body.tools.map((t: { name: string }) => t.name)).toContain('note');
    } finally {
      await server.close();
    }
  });
});
