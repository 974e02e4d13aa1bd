import type { ContentBlockParam, MessageParam } from '../../kernel/index.js';

/** How every summary head starts (compact-full writes the same lead). */
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

/** The head of a compacted history: the summary, then the latest request verbatim (if any). */
export function summaryHead(summary: string, request: ContentBlockParam[] | undefined, intro: string): ContentBlockParam[] {
  const head: ContentBlockParam[] = [{ type: 'text', text: `${SUMMARY_LEAD} ${intro}:\n\n<summary>\n${summary}\n</summary>` }];
  if (request) head.push({ type: 'text', text: REQUEST_LEAD }, ...request);
  return head;
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

export interface Split {
  /** The part the summary replaces. */
  older: MessageParam[];
  /** Recent turns kept as they are; starts at an assistant message, so no tool pair is split. */
  tail: MessageParam[];
  /** The user's latest request when it falls in `older`: it is kept verbatim. */
  latestRequest?: ContentBlockParam[];
}

/**
 * Where to cut: keep at most `keepTurns` recent turns that `fits` allows (fewer if they are big). Keeps the
 * last assistant message when the history ends with one (never an unanswered tool_use). Null when there is
 * nothing older than the first request to summarise.
 */
export function splitHistory(messages: readonly MessageParam[], keepTurns: number, fits: (tail: MessageParam[]) => boolean): Split | null {
  if (messages.length === 0) return null;
  // A tail starting at index 1 would leave nothing but the first message to summarise.
  const starts: number[] = [];
  messages.forEach((message, index) => {
    if (index > 1 && message.role === 'assistant') starts.push(index);
  });
  const fewest = messages[messages.length - 1]!.role === 'user' ? 0 : 1;
  if (starts.length < fewest) return null;
  let tailStart = messages.length;
  for (let keep = Math.max(fewest, Math.min(keepTurns, starts.length)); keep >= fewest; keep--) {
    tailStart = keep === 0 ? messages.length : starts[starts.length - keep]!;
    if (fits(messages.slice(tailStart))) break;
  }
  const older = messages.slice(0, tailStart);
  const tail = messages.slice(tailStart);
  return { older, tail, latestRequest: tail.some(isRequest) ? undefined : latestRequest(older) };
}
