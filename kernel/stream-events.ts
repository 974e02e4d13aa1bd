/**
 * `--include-partial-messages`: the model's stream as `stream_event` lines carrying Anthropic stream events,
 * rebuilt from Keel's delta events (a tool_use block's name arrives with the full `assistant` message).
 */
import type { AgentEvent, Session } from './types.js';
import type { OutMessage } from './protocol.js';

export class PartialStream {
  private open = new Map<number, string>();

  constructor(private readonly session: () => Session | undefined) {}

  /** The stream_event lines one kernel event stands for (none for most). */
  lines(event: AgentEvent): OutMessage[] {
    const events: Array<Record<string, unknown>> = [];
    const start = (index: number, block: Record<string, unknown>) => {
      if (this.open.has(index)) return;
      this.open.set(index, String(block.type));
      events.push({ type: 'content_block_start', index, content_block: block });
    };
    switch (event.type) {
      case 'turn_start':
        this.open.clear();
        events.push({ type: 'message_start', message: { type: 'message', role: 'assistant', content: [], model: this.session()?.model } });
        break;
      case 'text_delta':
        start(event.index, { type: 'text', text: '' });
        events.push({ type: 'content_block_delta', index: event.index, delta: { type: 'text_delta', text: event.text } });
        break;
      case 'thinking_delta':
        start(event.index, { type: 'thinking', thinking: '' });
        events.push({ type: 'content_block_delta', index: event.index, delta: { type: 'thinking_delta', thinking: event.text } });
        break;
      case 'tool_input_delta':
        start(event.index, { type: 'tool_use', id: event.toolUseId, input: {} });
        events.push({ type: 'content_block_delta', index: event.index, delta: { type: 'input_json_delta', partial_json: event.partialJson } });
        break;
      case 'assistant_message':
        for (const index of this.open.keys()) events.push({ type: 'content_block_stop', index });
        this.open.clear();
        events.push({ type: 'message_delta', delta: { stop_reason: event.response.stopReason, stop_sequence: null }, usage: event.response.usage });
        events.push({ type: 'message_stop' });
        break;
      default:
        break;
    }
    const session = this.session();
    return events.map((e) => ({ type: 'stream_event', event: e, parent_tool_use_id: null, session_id: session?.id ?? null }));
  }
}
