import type { ContentBlockParam, MessageParam } from '../../kernel/index.js';

export const SNIP_MARK = '[Earlier conversation snipped';

/** A user message the person typed (or a nudge), as opposed to one that carries tool results. */
export function isRequest(message: MessageParam): boolean {
  if (message.role !== 'user') return false;
  return typeof message.content === 'string' || !message.content.some((block) => block.type === 'tool_result');
}

export function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

export interface SnipOptions {
  /** Most turns (assistant messages with their tool results) to keep at the end. */
  keepTurns: number;
  /** Whether a candidate history is small enough; snip keeps fewer turns until it is, down to the last one. */
  fits?: (messages: MessageParam[]) => boolean;
}

export interface SnipPlan {
  messages: MessageParam[];
  removed: number;
}

/**
 * Drops the oldest turns. Keeps the first user message (with the latest request folded into it when that
 * request would be dropped) and the last turns. The kept tail starts at an assistant message, so a
 * `tool_result` always stays right after its `tool_use`. Returns null when nothing can be dropped.
 */
export function snipMessages(messages: readonly MessageParam[], opts: SnipOptions): SnipPlan | null {
  const head = messages[0];
  if (!head || head.role !== 'user' || messages.length < 3) return null;
  const starts: number[] = [];
  messages.forEach((message, index) => {
    if (index > 1 && message.role === 'assistant') starts.push(index);
  });
  const last = messages[messages.length - 1]!;
  // A tail of zero turns is allowed only when the history ends on a user message (never drop the last answer
  // or an unanswered tool_use).
  const fewest = last.role === 'user' ? 0 : 1;
  let latest = -1;
  messages.forEach((message, index) => {
    if (isRequest(message)) latest = index;
  });
  let plan: SnipPlan | null = null;
  if (starts.length < fewest) return null;
  for (let keep = Math.max(fewest, Math.min(opts.keepTurns, starts.length)); keep >= fewest; keep--) {
    const tailStart = keep === 0 ? messages.length : starts[starts.length - keep]!;
    if (tailStart <= 1) continue;
    const removed = tailStart - 1;
    const blocks: ContentBlockParam[] = blocksOf(head).filter((block) => !(block.type === 'text' && block.text.startsWith(SNIP_MARK)));
    blocks.push({ type: 'text', text: `${SNIP_MARK} to stay within the context window: ${removed} older messages were removed.]` });
    if (latest > 0 && latest < tailStart) blocks.push(...blocksOf(messages[latest]!));
    plan = { messages: [{ role: 'user', content: blocks }, ...messages.slice(tailStart)], removed };
    if (!opts.fits || opts.fits(plan.messages)) return plan;
  }
  return plan;
}
