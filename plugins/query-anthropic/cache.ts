/**
 * Prompt caching: at most four `cache_control` breakpoints, placed by us on copies (history is never mutated):
 * after the tool schemas, after the stable part of the system prompt, on the latest message, and on the
 * message that was latest in the previous request (so this request reads what that one wrote).
 * The prefix stays byte-stable: string contents become one text block, so a message renders the same
 * whether or not it carries a breakpoint this turn.
 */
import type { AnthropicTool, ContentBlockParam, MessageParam, TextBlockParam } from '../../kernel/index.js';

export const MAX_BREAKPOINTS = 4;
const EPHEMERAL = { type: 'ephemeral' } as const;

export interface CacheableRequest {
  tools: AnthropicTool[];
  system: TextBlockParam[];
  messages: MessageParam[];
}

/**
 * A system block a `contextLoad` tap marks `cache_control: null` is volatile (changes between turns): the
 * system breakpoint goes on the block before the first volatile one. Otherwise on the last block.
 */
export function placeBreakpoints(input: CacheableRequest): CacheableRequest {
  let budget = MAX_BREAKPOINTS;
  const tools = markTools(input.tools);
  if (tools.length > 0) budget--;

  const firstVolatile = input.system.findIndex((block) => block.cache_control === null);
  const stableEnd = (firstVolatile === -1 ? input.system.length : firstVolatile) - 1;
  const markSystem = stableEnd >= 0 && input.system[stableEnd].text.length > 0;
  const system: TextBlockParam[] = input.system.map(({ cache_control: _drop, ...block }, index) =>
    markSystem && index === stableEnd ? { ...block, cache_control: EPHEMERAL } : { ...block },
  );
  if (markSystem) budget--;

  // Messages without a breakpoint are passed through as they are (no copy): history is never mutated.
  const messages = normalizeMessages(input.messages);
  for (const index of messageBreakpoints(messages)) {
    if (budget === 0) break;
    const marked = withBreakpoint(messages[index]);
    if (marked) {
      messages[index] = marked;
      budget--;
    }
  }
  return { tools, system, messages };
}

/**
 * The tool list with its breakpoint on the last tool, the same frozen list for the same tools (API tools are
 * derived once per tool and never changed), so its bytes are serialised once (body.ts). Keyed by the first tool.
 */
const markedTools = new WeakMap<AnthropicTool, { sources: AnthropicTool[]; marked: AnthropicTool[] }>();

function markTools(input: AnthropicTool[]): AnthropicTool[] {
  if (input.length === 0) return [];
  const known = markedTools.get(input[0]);
  if (known && known.sources.length === input.length && known.sources.every((tool, i) => tool === input[i])) return known.marked;
  const tools = input.map(({ cache_control: _drop, ...tool }) => ({ ...tool }) as AnthropicTool);
  tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: EPHEMERAL };
  const marked = Object.freeze(tools) as AnthropicTool[];
  markedTools.set(input[0], { sources: [...input], marked });
  return marked;
}

/** The latest message, then the last user message before the latest assistant reply (the previous request's tail). */
function messageBreakpoints(messages: MessageParam[]): number[] {
  const last = messages.length - 1;
  if (last < 0) return [];
  const points = [last];
  let i = last - 1;
  while (i >= 0 && messages[i].role !== 'assistant') i--;
  while (i >= 0 && messages[i].role !== 'user') i--;
  if (i >= 0 && i !== last) points.push(i);
  return points;
}

/**
 * Normalised copies of a conversation's messages, in order: the same object for a message every turn (while its
 * content is the same), so what is derived from it (its serialised bytes, body.ts) is derived once. A request's
 * history is the previous one's plus a few messages, so only those are normalised; finding where the known prefix
 * ends is a pointer comparison per message. Keyed by the conversation's first message; a history that diverges
 * (rewritten, compacted) is normalised again from where it differs.
 */
interface Normalized {
  sources: MessageParam[];
  /** Each source's content and its length when normalised: content replaced or grown in place is not the one known. */
  contents: MessageParam['content'][];
  lengths: number[];
  copies: MessageParam[];
}

const normalizedBy = new WeakMap<MessageParam, Normalized>();

function normalizeMessages(messages: MessageParam[]): MessageParam[] {
  if (messages.length === 0) return [];
  let known = normalizedBy.get(messages[0]);
  if (!known) normalizedBy.set(messages[0], (known = { sources: [], contents: [], lengths: [], copies: [] }));
  const n = Math.min(known.sources.length, messages.length);
  let k = 0;
  // A message passed through as itself shows its own growth; only a copy can be stale when its content grew in place.
  while (k < n && known.sources[k] === messages[k] && known.contents[k] === messages[k].content && (known.copies[k] === messages[k] || known.lengths[k] === messages[k].content.length)) k++;
  known.sources.length = known.contents.length = known.lengths.length = known.copies.length = k;
  for (let i = k; i < messages.length; i++) {
    const message = messages[i];
    known.sources.push(message);
    known.contents.push(message.content);
    known.lengths.push(message.content.length);
    known.copies.push(normalizeMessage(message));
  }
  return known.copies.slice();
}

/** String content as one text block; blocks that carry a `cache_control` of their own lose it. Else the message itself. */
function normalizeMessage(message: MessageParam): MessageParam {
  const content = message.content;
  if (typeof content === 'string') return { ...message, content: [{ type: 'text', text: content }] } as MessageParam;
  const blocks = content as ContentBlockParam[];
  return blocks.some((block) => 'cache_control' in block) ? ({ ...message, content: blocks.map(stripCacheControl) } as MessageParam) : message;
}

function stripCacheControl(block: ContentBlockParam): ContentBlockParam {
  if (!('cache_control' in block)) return block;
  const { cache_control: _drop, ...rest } = block as ContentBlockParam & { cache_control?: unknown };
  return rest as ContentBlockParam;
}

/** A copy of the message with a breakpoint on its last block that may carry one (not thinking, not empty text). */
function withBreakpoint(message: MessageParam): MessageParam | undefined {
  const blocks = message.content as ContentBlockParam[];
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i];
    if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
    if (block.type === 'text' && block.text.length === 0) continue;
    const content = [...blocks];
    content[i] = { ...block, cache_control: EPHEMERAL } as ContentBlockParam;
    return { ...message, content } as MessageParam;
  }
  return undefined;
}
