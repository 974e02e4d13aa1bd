import type { ContentBlockParam, MessageParam, TextBlockParam } from '../../kernel/index.js';

/** About four characters per token for English and code; an approximation, corrected by the API's usage. */
export const CHARS_PER_TOKEN = 4;
/** What an image costs, roughly, whatever its base64 size. */
const IMAGE_TOKENS = 1600;
/** Role and framing overhead of one message. */
const MESSAGE_OVERHEAD = 4;

export function estimateText(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function estimateBlock(block: ContentBlockParam | TextBlockParam): number {
  switch (block.type) {
    case 'text':
      return estimateText(block.text);
    case 'image':
    case 'document':
      return IMAGE_TOKENS;
    case 'thinking':
      return estimateText(block.thinking);
    case 'tool_use':
      return estimateText(block.name) + estimateText(JSON.stringify(block.input ?? {}));
    case 'tool_result': {
      const content = block.content;
      if (content === undefined) return 1;
      if (typeof content === 'string') return estimateText(content);
      return content.reduce((sum, part) => sum + estimateBlock(part as ContentBlockParam), 0);
    }
    default:
      return estimateText(JSON.stringify(block));
  }
}

/**
 * Estimates by message, remembered per message object: history messages are replaced, never edited, so each
 * is estimated once instead of on every turn (the check on the content array catches a replaced array).
 */
const estimates = new WeakMap<MessageParam, { content: MessageParam['content']; length: number; tokens: number }>();

export function estimateMessage(message: MessageParam): number {
  const content = message.content;
  if (typeof content === 'string') return MESSAGE_OVERHEAD + estimateText(content);
  const known = estimates.get(message);
  if (known && known.content === content && known.length === content.length) return known.tokens;
  const tokens = MESSAGE_OVERHEAD + content.reduce((sum, block) => sum + estimateBlock(block), 0);
  estimates.set(message, { content, length: content.length, tokens });
  return tokens;
}

export function estimateMessages(messages: readonly MessageParam[]): number {
  return messages.reduce((sum, message) => sum + estimateMessage(message), 0);
}
