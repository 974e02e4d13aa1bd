import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { MessageAccumulator } from '../../../plugins/query-anthropic/accumulate.js';

type Event = Anthropic.RawMessageStreamEvent;

const start = (usage: Partial<Anthropic.Usage> = {}): Event =>
  ({
    type: 'message_start',
    message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 3, cache_read_input_tokens: 4, ...usage } },
  }) as unknown as Event;
const blockStart = (index: number, content_block: unknown): Event => ({ type: 'content_block_start', index, content_block }) as Event;
const delta = (index: number, d: unknown): Event => ({ type: 'content_block_delta', index, delta: d }) as Event;
const stop = (usage: Record<string, unknown>, stop_reason = 'end_turn'): Event =>
  ({ type: 'message_delta', delta: { stop_reason, stop_sequence: null, stop_details: null, container: null }, usage }) as unknown as Event;

function fold(events: Event[]): Anthropic.Message {
  const acc = new MessageAccumulator();
  for (const event of events) acc.add(event);
  return acc.final();
}

describe('the message accumulator', () => {
  it('folds text, citations, thinking, signatures and tool input into the message, and usage as whole-message totals', () => {
    const citation = { type: 'char_location', cited_text: 'x', document_index: 0, document_title: null, start_char_index: 0, end_char_index: 1 };
    const message = fold([
      start(),
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      delta(0, { type: 'thinking_delta', thinking: 'let me ' }),
      delta(0, { type: 'thinking_delta', thinking: 'think' }),
      delta(0, { type: 'signature_delta', signature: 'sig' }),
      { type: 'content_block_stop', index: 0 },
      blockStart(1, { type: 'text', text: '', citations: null }),
      delta(1, { type: 'text_delta', text: 'Hello ' }),
      delta(1, { type: 'citations_delta', citation }),
      delta(1, { type: 'text_delta', text: 'world' }),
      blockStart(2, { type: 'tool_use', id: 'toolu_1', name: 'note', input: {} }),
      delta(2, { type: 'input_json_delta', partial_json: '{"text":' }),
      delta(2, { type: 'input_json_delta', partial_json: '"é"}' }),
      blockStart(3, { type: 'tool_use', id: 'toolu_2', name: 'look', input: {} }),
      stop({ output_tokens: 42, input_tokens: null, cache_read_input_tokens: 7, cache_creation_input_tokens: null }, 'tool_use'),
      { type: 'message_stop' },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'let me think', signature: 'sig' },
      { type: 'text', text: 'Hello world', citations: [citation] },
      { type: 'tool_use', id: 'toolu_1', name: 'note', input: { text: 'é' } },
      { type: 'tool_use', id: 'toolu_2', name: 'look', input: {} },
    ]);
    // Present counters overwrite, absent (null) ones keep the message_start value; nothing is added up.
    expect(message.usage).toMatchObject({ input_tokens: 10, output_tokens: 42, cache_creation_input_tokens: 3, cache_read_input_tokens: 7 });
  });

  it('refuses a tool input that did not arrive whole, for client and server tools alike, instead of repairing it', () => {
    for (const type of ['tool_use', 'server_tool_use']) {
      const events = [start(), blockStart(0, { type, id: 'toolu_cut', name: 'note', input: {} }), delta(0, { type: 'input_json_delta', partial_json: '{"text":"hal' }), stop({ output_tokens: 5 }, 'tool_use')];
      expect(() => fold(events)).toThrow('the input of tool call "note" (toolu_cut) did not arrive whole (12 bytes of unterminated JSON)');
    }
  });

  it('refuses a stream without events, or one that ended before its stop reason', () => {
    expect(() => fold([])).toThrow(/without sending any chunks/);
    expect(() => fold([start(), blockStart(0, { type: 'text', text: '' }), delta(0, { type: 'text_delta', text: 'half' })])).toThrow(/before the message was complete/);
    expect(() => fold([start(), start()])).toThrow(/Unexpected event order/);
  });

  it('leaves the events it folded as they were', () => {
    const first = start();
    const block = { type: 'text', text: '' };
    fold([first, blockStart(0, block), delta(0, { type: 'text_delta', text: 'x' }), stop({ output_tokens: 2 })]);
    expect(block.text).toBe('');
    expect((first as Anthropic.RawMessageStartEvent).message).toMatchObject({ content: [], stop_reason: null, usage: { output_tokens: 1 } });
  });
});
