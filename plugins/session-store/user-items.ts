/**
 * The `transcript` service: what a resumed conversation's user messages were, for every UI that prints one. Read by
 * shape (the session store imports no plugin): a prompt, a
 * compaction's summary head (compact-full and compact-auto start it with SUMMARY_LEAD, wrap the summary in
 * <summary>, and may follow it with the latest request after REQUEST_LEAD), or the user's own `!command` and
 * its output (tool-bash's <bash-input> / <bash-stdout> / <bash-stderr>).
 */
import type { MessageParam } from '../../kernel/index.js';
import { hiddenNote, historyTail, type HistoryTail } from './resumed-history.js';

const SUMMARY_LEAD = 'This session continues an earlier conversation';
const REQUEST_LEAD = "The user's latest request, verbatim:";
const SHELL_INPUT = /^<bash-input>([\s\S]*)<\/bash-input>$/;
const SHELL_OUTPUT = /^<bash-(?:stdout|stderr)>[\s\S]*<\/bash-(?:stdout|stderr)>$/;

export type HistoryItem = { kind: 'prompt' | 'summary' | 'shell'; text: string };

declare module '../../kernel/types.js' {
  interface Services {
    /** How a resumed session is shown: its user messages (prompts, a compaction's summary, the user's `!command`s), and only its end. */
    transcript: TranscriptService;
  }
}

export interface TranscriptService {
  userItems(message: MessageParam): HistoryItem[];
  /** The end of `messages` a UI prints: the last RESUMED_HISTORY_ROWS terminal rows at `width` columns. */
  tail<M>(messages: readonly M[], linesOf: (message: M) => string[], width: number): HistoryTail;
  /** The one line above a cut history (`… 9,950 earlier messages not shown here …`), or null. */
  hiddenNote(tail: HistoryTail): string | null;
}

/** The user's texts of one message as they should be shown; tool results and shell output are left out. */
export function userItems(message: MessageParam): HistoryItem[] {
  const blocks = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
  const texts = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : []));
  const items: HistoryItem[] = [];
  if (texts[0]?.startsWith(SUMMARY_LEAD)) {
    const summary = /<summary>\n?([\s\S]*?)\n?<\/summary>/.exec(texts[0])?.[1] ?? texts[0];
    items.push({ kind: 'summary', text: summary.trim() });
    const at = texts.indexOf(REQUEST_LEAD);
    if (at >= 0) items.push(...texts.slice(at + 1).map((text): HistoryItem => ({ kind: 'prompt', text })));
    return items;
  }
  for (const text of texts) {
    const shell = SHELL_INPUT.exec(text);
    if (shell) items.push({ kind: 'shell', text: shell[1]! });
    else if (!SHELL_OUTPUT.test(text)) items.push({ kind: 'prompt', text });
  }
  return items;
}

export const transcript: TranscriptService = { userItems, tail: historyTail, hiddenNote };
