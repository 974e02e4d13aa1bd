/**
 * Folds a Messages API event stream into the final message, as the SDK's `MessageStream` does, without its
 * per-request machinery (an abort controller and listener, promises, an event emitter, a re-parse of the partial
 * tool input on every delta). Blocks are updated in place: nothing else holds them while the stream runs.
 * A tool call's input is parsed once, when the message is complete; input that does not parse is an error,
 * never repaired, so a call whose input did not arrive whole never runs.
 */
import type Anthropic from '@anthropic-ai/sdk';

type Block = Anthropic.ContentBlock & { text?: string; thinking?: string; signature?: string; citations?: unknown[] | null; input?: unknown };

export class MessageAccumulator {
  private message: Anthropic.Message | undefined;
  /** Tool-input JSON by block index, as it streamed in. */
  private readonly json = new Map<number, string>();

  /** Applies one event; returns the block a delta belongs to, when it applies to one. */
  add(event: Anthropic.RawMessageStreamEvent): Block | undefined {
    if (event.type === 'message_start') {
      if (this.message) throw new Error(`Unexpected event order, got ${event.type} before receiving "message_stop"`);
      this.message = { ...event.message, content: [...event.message.content], usage: { ...event.message.usage } };
      return undefined;
    }
    const message = this.message;
    if (!message) return undefined;
    switch (event.type) {
      case 'message_delta': {
        message.stop_reason = event.delta.stop_reason;
        message.stop_sequence = event.delta.stop_sequence;
        message.stop_details = event.delta.stop_details;
        if (event.delta.container != null) message.container = event.delta.container;
        const usage = event.usage;
        message.usage.output_tokens = usage.output_tokens;
        // The other counters are whole-message totals, omitted when they do not apply: overwrite when present.
        if (usage.input_tokens != null) message.usage.input_tokens = usage.input_tokens;
        if (usage.cache_creation_input_tokens != null) message.usage.cache_creation_input_tokens = usage.cache_creation_input_tokens;
        if (usage.cache_read_input_tokens != null) message.usage.cache_read_input_tokens = usage.cache_read_input_tokens;
        if (usage.server_tool_use != null) message.usage.server_tool_use = usage.server_tool_use;
        if (usage.output_tokens_details != null) message.usage.output_tokens_details = usage.output_tokens_details;
        return undefined;
      }
      case 'content_block_start':
        message.content.push({ ...event.content_block });
        return undefined;
      case 'content_block_delta': {
        const block = message.content[event.index] as Block | undefined;
        if (!block) return undefined;
        const delta = event.delta;
        if (delta.type === 'text_delta' && block.type === 'text') block.text = (block.text || '') + delta.text;
        else if (delta.type === 'citations_delta' && block.type === 'text') block.citations = [...(block.citations ?? []), delta.citation];
        else if (delta.type === 'input_json_delta' && (block.type === 'tool_use' || block.type === 'server_tool_use')) {
          this.json.set(event.index, (this.json.get(event.index) ?? '') + delta.partial_json);
        } else if (delta.type === 'thinking_delta' && block.type === 'thinking') block.thinking += delta.thinking;
        else if (delta.type === 'signature_delta' && block.type === 'thinking') block.signature = delta.signature;
        return block;
      }
      default:
        return undefined;
    }
  }

  /** The complete message: it must have a stop reason, and every streamed tool input must parse. */
  final(): Anthropic.Message {
    const message = this.message;
    if (!message) throw new Error('request ended without sending any chunks');
    if (!message.stop_reason) throw new Error('the stream ended before the message was complete');
    for (const [index, json] of this.json) {
      const block = message.content[index] as Block;
      if (json.trim() === '') {
        block.input = {};
        continue;
      }
      try {
        block.input = JSON.parse(json);
      } catch {
        const name = block.type === 'tool_use' || block.type === 'server_tool_use' ? `"${block.name}" (${block.id})` : `at index ${index}`;
        throw new Error(`the input of tool call ${name} did not arrive whole (${json.length} bytes of unterminated JSON)`);
      }
    }
    return message;
  }
}
