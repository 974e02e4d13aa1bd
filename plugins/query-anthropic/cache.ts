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
  const tools = input.tools.map(({ cache_control: _drop, ...tool }) => ({ ...tool }) as AnthropicTool);
  if (tools.length > 0) {
    tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: EPHEMERAL };
    budget--;
  }

  const firstVolatile = input.system.findIndex((block) => block.cache_control === null);
  const stableEnd = (firstVolatile === -1 ? input.system.length : firstVolatile) - 1;
  const markSystem = stableEnd >= 0 && input.system[stableEnd].text.length > 0;
  const system: TextBlockParam[] = input.system.map(({ cache_control: _drop, ...block }, index) =>
    markSystem && index === stableEnd ? { ...block, cache_control: EPHEMERAL } : { ...block },
  );
  if (markSystem) budget--;

  // Messages without a breakpoint are passed through as they are (no copy): history is never mutated.
  const messages = input.messages.map(normalizeMessage);
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
 * Normalised copies, one per history message (while its content is the same): the same object every turn, so
 * what is derived from it (its serialised bytes, body.ts) is derived once.
 */
const normalized = new WeakMap<MessageParam, { content: MessageParam['content']; length: number; copy: MessageParam }>();

/** String content as one text block; blocks that carry a `cache_control` of their own lose it. Else the message itself. */
function normalizeMessage(message: MessageParam): MessageParam {
  const content = message.content;
  const known = normalized.get(message);
  if (known && known.content === content && known.length === content.length) return known.copy;
  let copy: MessageParam;
  if (typeof content === 'string') copy = { ...message, content: [{ type: 'text', text: content }] } as MessageParam;
  else {
    const blocks = content as ContentBlockParam[];
    copy = blocks.some((block) => 'cache_control' in block) ? ({ ...message, content: blocks.map(stripCacheControl) } as MessageParam) : message;
  }
  normalized.set(message, { content, length: content.length, copy });
  return copy;
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
