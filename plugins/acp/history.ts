/** session/load: a resumed session's history, replayed to the editor as the updates it would have seen. */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { Kernel, MessageParam } from '../../kernel/index.js';
import { fence, kindOf, locationsOf, resultText, titleOf } from './updates.js';

export function replayUpdates(kernel: Kernel, messages: MessageParam[], cwd: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  const names = new Map<string, string>();
  for (const message of messages) {
    const blocks = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
    for (const block of blocks) {
      if (block.type === 'text' && block.text) {
        updates.push({ sessionUpdate: message.role === 'user' ? 'user_message_chunk' : 'agent_message_chunk', content: { type: 'text', text: block.text } });
      } else if (block.type === 'image' && block.source.type === 'base64') {
        updates.push({ sessionUpdate: message.role === 'user' ? 'user_message_chunk' : 'agent_message_chunk', content: { type: 'image', data: block.source.data, mimeType: block.source.media_type } });
      } else if (block.type === 'thinking') {
        updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: block.thinking } });
      } else if (block.type === 'tool_use') {
        names.set(block.id, block.name);
        updates.push({
          sessionUpdate: 'tool_call',
          toolCallId: block.id,
          title: titleOf(block.name, block.input, cwd),
          kind: kindOf(block.name, block.input),
          locations: locationsOf(kernel, block.name, block.input, cwd),
          rawInput: block.input,
          status: 'in_progress',
        });
      } else if (block.type === 'tool_result') {
        const text = resultText({ content: block.content ?? '' });
        updates.push({
          sessionUpdate: 'tool_call_update',
          toolCallId: block.tool_use_id,
          status: block.is_error ? 'failed' : 'completed',
          content: text ? [{ type: 'content', content: { type: 'text', text: names.get(block.tool_use_id) === 'bash' ? fence(text) : text } }] : [],
        });
      }
    }
  }
  return updates;
}
