import type { ContentBlockParam, MessageParam } from '../../kernel/index.js';

/** How every summary head starts (compact-auto writes the same lead). */
export const SUMMARY_LEAD = 'This session continues an earlier conversation';
/** The block in a summary head after which the user's latest request follows verbatim. */
export const REQUEST_LEAD = "The user's latest request, verbatim:";

export function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

function isSummaryHead(message: MessageParam): boolean {
  const first = blocksOf(message)[0];
  return message.role === 'user' && first?.type === 'text' && first.text.startsWith(SUMMARY_LEAD);
}

/** A user message the person typed (or a nudge), as opposed to tool results or a summary head. */
export function isRequest(message: MessageParam): boolean {
  if (message.role !== 'user' || isSummaryHead(message)) return false;
  return typeof message.content === 'string' || !message.content.some((block) => block.type === 'tool_result');
}

/** The user's latest request in `messages`, also when an earlier compaction folded it into a summary head. */
export function latestRequest(messages: readonly MessageParam[]): ContentBlockParam[] | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (isRequest(message)) return blocksOf(message);
    if (isSummaryHead(message)) {
      const blocks = blocksOf(message);
      const at = blocks.findIndex((block) => block.type === 'text' && block.text === REQUEST_LEAD);
      if (at >= 0) return blocks.slice(at + 1);
    }
  }
  return undefined;
}
