// Mirrors plugins/session-store/repair.ts (plugins never import each other): the same repair rules for the same records.
/**
 * Makes a rebuilt history valid for the API: every tool_use gets exactly one tool_result in the next user
 * message (a synthesized "interrupted" error when the session stopped first), and results whose call is
 * not in the message before them are dropped (their call was on a corrupt line).
 */
import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '../../kernel/index.js';

export const INTERRUPTED = 'Interrupted: the session stopped before this tool call returned a result.';

export interface Repaired {
  messages: MessageParam[];
  /** A results message appended after the last assistant message (the common crash), else undefined. */
  tailFix?: MessageParam;
  /** How many tool_results were synthesized or dropped. */
  fixes: number;
}

export function repairToolPairs(messages: MessageParam[]): Repaired {
  const out: MessageParam[] = [];
  let fixes = 0;
  let tailFix: MessageParam | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message.role === 'user') {
      // A user message not consumed below follows no tool_use: any tool_result in it is an orphan.
      const kept = dropResults(message);
      fixes += kept.dropped;
      if (kept.message) out.push(kept.message);
      continue;
    }
    out.push(message);
    if (message.role !== 'assistant') continue;
    const ids = toolUseIds(message);
    if (ids.length === 0) continue;
    const next = messages[i + 1];
    if (next?.role === 'user') {
      const paired = pairResults(next, ids);
      fixes += paired.fixes;
      out.push(paired.message);
      i++;
    } else {
      const synthesized: MessageParam = { role: 'user', content: ids.map(interrupted) };
      fixes += ids.length;
      out.push(synthesized);
      if (i === messages.length - 1) tailFix = synthesized;
    }
  }
  return { messages: fixes ? out : messages, tailFix, fixes };
}

function toolUseIds(message: MessageParam): string[] {
  if (typeof message.content === 'string') return [];
  const ids: string[] = [];
  for (const block of message.content) if (block.type === 'tool_use') ids.push(block.id);
  return ids;
}

function interrupted(id: string): ToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: id, content: INTERRUPTED, is_error: true };
}

/** Results in call order (synthesized where missing), then the message's other blocks. */
function pairResults(message: MessageParam, ids: string[]): { message: MessageParam; fixes: number } {
  const blocks: ContentBlockParam[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  const results = new Map<string, ToolResultBlockParam>();
  const others: ContentBlockParam[] = [];
  let fixes = 0;
  for (const block of blocks) {
    if (block.type !== 'tool_result') others.push(block);
    else if (ids.includes(block.tool_use_id) && !results.has(block.tool_use_id)) results.set(block.tool_use_id, block);
    else fixes++;
  }
  const ordered = ids.map((id) => results.get(id) ?? (fixes++, interrupted(id)));
  if (fixes === 0 && isInOrder(blocks, ordered)) return { message, fixes };
  return { message: { role: 'user', content: [...ordered, ...others] }, fixes: fixes || 1 };
}

function isInOrder(blocks: ContentBlockParam[], ordered: ToolResultBlockParam[]): boolean {
  return ordered.every((block, index) => blocks[index] === block);
}

function dropResults(message: MessageParam): { message?: MessageParam; dropped: number } {
  if (typeof message.content === 'string') return { message, dropped: 0 };
  const content = message.content.filter((block) => block.type !== 'tool_result');
  const dropped = message.content.length - content.length;
  if (dropped === 0) return { message, dropped };
  return content.length ? { message: { role: 'user', content }, dropped } : { dropped };
}
