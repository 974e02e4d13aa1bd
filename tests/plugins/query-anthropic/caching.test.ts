import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type MessageParam, type TextBlockParam } from '../../../kernel/index.js';
import { placeBreakpoints } from '../../../plugins/query-anthropic/cache.js';
import { buildParams } from '../../../plugins/query-anthropic/index.js';
import systemPrompt from '../../../plugins/system-prompt/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testSession } from '../../helpers/kernel.js';
import { harness } from './setup.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Every object in a request body that carries `cache_control`, with where it sits. Bodies are raw JSON, hence `any`. */
function breakpoints(body: any): string[] {
  const found: string[] = [];
  body.tools?.forEach((t: any, i: number) => t.cache_control && found.push(`tools[${i}]`));
  body.system?.forEach((b: any, i: number) => b.cache_control && found.push(`system[${i}]`));
  body.messages.forEach((m: any, i: number) =>
    (Array.isArray(m.content) ? m.content : []).forEach((b: any, j: number) => b.cache_control && found.push(`messages[${i}][${j}]`)),
  );
  return found;
}

const strip = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (key, v) => (key === 'cache_control' ? undefined : v)));

describe('prompt caching', () => {
  it('places at most 4 breakpoints and keeps the prefix byte-stable over three turns', async () => {
    server = await startAnthropicServer([
      callTool('note', { text: 'one' }, 'toolu_a'),
      callTool('look', { path: 'src' }, 'toolu_b'),
      say('all done'),
    ]);
    const h = harness(server.url, { extra: [systemPrompt()] });
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'do the thing');
    expect(result.result).toBe('all done');
    const bodies = server.messageRequests().map((r) => r.body);
    expect(bodies).toHaveLength(3);

    const last = (body: any) => body.tools.length - 1;
    expect(breakpoints(bodies[0])).toEqual([`tools[${last(bodies[0])}]`, 'system[1]', 'messages[0][0]']);
    expect(breakpoints(bodies[1])).toEqual([`tools[${last(bodies[1])}]`, 'system[1]', 'messages[0][0]', 'messages[2][0]']);
    expect(breakpoints(bodies[2])).toEqual([`tools[${last(bodies[2])}]`, 'system[1]', 'messages[2][0]', 'messages[4][0]']);
    for (const body of bodies) expect(breakpoints(body).length).toBeLessThanOrEqual(4);

    // Tools and system: identical bytes on every turn, breakpoints included.
    expect(JSON.stringify(bodies[1].tools)).toBe(JSON.stringify(bodies[0].tools));
    expect(JSON.stringify(bodies[2].tools)).toBe(JSON.stringify(bodies[0].tools));
    expect(JSON.stringify(bodies[1].system)).toBe(JSON.stringify(bodies[0].system));
    expect(JSON.stringify(bodies[2].system)).toBe(JSON.stringify(bodies[0].system));
    // Messages: each request's messages are a byte-identical prefix of the next (breakpoints aside).
    for (const k of [0, 1]) {
      const before = strip(bodies[k].messages) as unknown[];
      const after = strip(bodies[k + 1].messages) as unknown[];
      expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
    }
    // The history itself carries no breakpoints: they are placed on copies.
    expect(JSON.stringify(h.kernel.state.get().messages)).not.toContain('cache_control');
  });

  it('normalises a message again when its content is replaced or grown in place, and a history that diverges', () => {
    const first: MessageParam = { role: 'user', content: 'start' };
    const answer: MessageParam = { role: 'assistant', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } } as TextBlockParam] };
    const next: MessageParam = { role: 'user', content: [{ type: 'text', text: 'b' }] };
    const plain = (messages: MessageParam[]) => strip(placeBreakpoints({ tools: [], system: [], messages }).messages);
    const expected = (messages: MessageParam[]) => strip(messages.map((m) => (typeof m.content === 'string' ? { ...m, content: [{ type: 'text', text: m.content }] } : m)));
    const history = [first, answer, next];
    expect(plain(history)).toEqual(expected(history));
    (answer.content as TextBlockParam[]).push({ type: 'text', text: 'c' });
    expect(plain(history)).toEqual(expected(history));
    (answer as { content: MessageParam['content'] }).content = [{ type: 'text', text: 'z' }];
    expect(plain(history)).toEqual(expected(history));
    const diverged = [first, { role: 'assistant', content: [{ type: 'text', text: 'summary' }] } as MessageParam];
    expect(plain(diverged)).toEqual(expected(diverged));
    expect(plain(history)).toEqual(expected(history));
    // The history itself is never touched.
    expect(answer.content).toEqual([{ type: 'text', text: 'z' }]);
  });

  it('gives the same frozen tool list for the same tools, and a new one when the tools change', () => {
    const a = { name: 'a', description: 'A', input_schema: { type: 'object' as const } };
    const b = { name: 'b', description: 'B', input_schema: { type: 'object' as const }, cache_control: { type: 'ephemeral' as const } };
    const c = { name: 'c', description: 'C', input_schema: { type: 'object' as const } };
    const tools = (list: typeof a[]) => placeBreakpoints({ tools: list, system: [], messages: [] }).tools;
    const first = tools([a, b]);
    expect(first).toEqual([a, b]);
    expect(Object.isFrozen(first)).toBe(true);
    expect(tools([a, b])).toBe(first);
    const changed = tools([a, c]);
    expect(changed).not.toBe(first);
    expect(changed).toEqual([a, { ...c, cache_control: { type: 'ephemeral' } }]);
    expect(tools([a])).toEqual([{ ...a, cache_control: { type: 'ephemeral' } }]);
    // The tools given are never changed.
    expect(b.cache_control).toEqual({ type: 'ephemeral' });
    expect('cache_control' in a).toBe(false);
  });

  it('puts the system breakpoint before the first block marked volatile', () => {
    const out = placeBreakpoints({
      tools: [],
      system: [
        { type: 'text', text: 'stable base' },
        { type: 'text', text: 'stable memory' },
        { type: 'text', text: 'now: 12:00', cache_control: null },
      ],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(out.system.map((b) => b.cache_control ?? null)).toEqual([null, { type: 'ephemeral' }, null]);
    expect('cache_control' in out.system[2]).toBe(false);
    expect(out.messages[0].content).toEqual([{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }]);
  });

  it('never exceeds 4 breakpoints, drops ones set elsewhere, and skips thinking and empty text blocks', () => {
    const out = placeBreakpoints({
      tools: [
        { name: 'a', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } },
        { name: 'b', input_schema: { type: 'object' } },
      ],
      system: [{ type: 'text', text: 'base', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q1', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'a1' }, { type: 'thinking', thinking: 't', signature: 's' }] },
        { role: 'user', content: [{ type: 'text', text: 'q2' }, { type: 'text', text: '' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'a2' }] },
        { role: 'user', content: 'q3' },
      ],
    });
    const count = JSON.stringify(out).split('cache_control').length - 1;
    expect(count).toBe(4);
    expect(out.tools.map((t) => t.cache_control ?? null)).toEqual([null, { type: 'ephemeral' }]);
    expect((out.messages[2].content as any[])[0].cache_control).toEqual({ type: 'ephemeral' });
    expect((out.messages[2].content as any[])[1].cache_control).toBeUndefined();
    expect((out.messages[4].content as any[])[0].cache_control).toEqual({ type: 'ephemeral' });
    expect((out.messages[0].content as any[])[0].cache_control).toBeUndefined();
  });

  it('marks no message block when the last message ends in thinking only', () => {
    const out = placeBreakpoints({
      tools: [],
      system: [],
      messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }] }],
    });
    expect(JSON.stringify(out)).not.toContain('cache_control');
  });
});

describe('thinking', () => {
  it('passes budget_tokens through and keeps thinking blocks and signatures in history exactly', async () => {
    server = await startAnthropicServer([
      { content: [{ type: 'thinking', thinking: 'I should take a note.', signature: 'sig-abc==' }, { type: 'tool_use', id: 'toolu_t', name: 'note', input: { text: 'n' } }] },
      say('noted'),
    ]);
    const h = harness(server.url, { config: { thinking: { budget_tokens: 2048 } } });
    const result = await runAgent(h.kernel, await testSession(h.kernel), 'think');
    expect(result.result).toBe('noted');
    const [first, second] = server.messageRequests().map((r) => r.body);
    expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const assistant = second.messages[1];
    expect(assistant.role).toBe('assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'I should take a note.', signature: 'sig-abc==' });
    expect(assistant.content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_t', name: 'note', input: { text: 'n' } });
    expect(h.of('thinking_delta').map((e) => e.text).join('')).toBe('I should take a note.');
  });

  it('rejects a thinking budget that does not fit under maxTokens, naming both keys', () => {
    expect(() =>
      buildParams({ tier: 'main', model: 'm', system: [], messages: [], tools: [], maxTokens: 1000, thinking: { budget_tokens: 1000 } }, true),
    ).toThrow('config thinking.budget_tokens (1000) must be less than maxTokens (1000)');
  });
});
