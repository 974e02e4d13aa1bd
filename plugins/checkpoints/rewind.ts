/** Rewinding: put files and/or the conversation back to how they were before a user turn. */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { MessageParam, Session } from '../../kernel/index.js';
import { hashOf, type CheckpointStore, type FileEntry, type TurnEntry } from './store.js';

export type RewindTarget = 'both' | 'files' | 'conversation';

export interface RewindOutcome {
  turn: TurnEntry;
  restored: string[];
  removed: string[];
  /** Files whose earlier content was not kept (too large, evicted), with why. */
  missed: string[];
  conversation: 'rewound' | 'kept' | 'unavailable';
  /** Why the conversation could not be rewound. */
  conversationNote?: string;
}

export const promptHash = (message: MessageParam) => hashOf(JSON.stringify(message.content));

/** The first line of a prompt, cut short, for lists. */
export function promptLine(message: MessageParam): string {
  const text = typeof message.content === 'string' ? message.content : message.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join(' ');
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 70 ? `${line.slice(0, 69)}…` : line;
}

/** The content each file had before turn `n`: its first snapshot in turn `n` or later. */
function earliest(turns: TurnEntry[]): Map<string, FileEntry> {
  const found = new Map<string, FileEntry>();
  for (const turn of turns) for (const file of turn.files) if (!found.has(file.path)) found.set(file.path, file);
  return found;
}

export function rewind(store: CheckpointStore, session: Session, n: number, target: RewindTarget): RewindOutcome {
  const turns = store.index.turns;
  const at = turns.findIndex((t) => t.n === n);
  if (at === -1) {
    const range = turns.length ? `turns ${turns[0]!.n}–${turns[turns.length - 1]!.n}` : 'no turns yet';
    throw new Error(`no turn ${n} in this session (${range})`);
  }
  const turn = turns[at]!;
  const outcome: RewindOutcome = { turn, restored: [], removed: [], missed: [], conversation: 'kept' };

  if (target !== 'files') {
    const message = session.messages[turn.messageIndex];
    if (!message || message.role !== 'user' || promptHash(message) !== turn.promptHash) {
      outcome.conversation = 'unavailable';
      outcome.conversationNote = 'the conversation was compacted since that turn, so its messages are no longer there to rewind to';
      if (target === 'conversation') throw new Error(`cannot rewind the conversation to turn ${n}: ${outcome.conversationNote}`);
    }
  }

  if (target !== 'conversation') {
    for (const [file, entry] of earliest(turns.slice(at))) {
      if (entry.skipped) {
        outcome.missed.push(`${file} (${entry.skipped === 'too-large' ? 'too large to keep' : entry.skipped === 'evicted' ? 'dropped to keep checkpoints within their size bound' : 'it could not be read'})`);
        continue;
      }
      if (entry.blob === null) {
        if (existsSync(file)) {
          rmSync(file, { force: true });
          outcome.removed.push(file);
        }
        continue;
      }
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, store.readBlob(entry.blob));
      outcome.restored.push(file);
    }
  }

  if (target !== 'files' && outcome.conversation !== 'unavailable') {
    session.messages.splice(turn.messageIndex);
    outcome.conversation = 'rewound';
    store.dropFrom(n);
  }
  return outcome;
}

export function describeOutcome(outcome: RewindOutcome, cwd: string, target: RewindTarget): string {
  const shown = (p: string) => {
    const rel = path.relative(cwd, p);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
  };
  const lines: string[] = [];
  const { turn } = outcome;
  if (target !== 'conversation') {
    const changed = [...outcome.restored.map((p) => `restored ${shown(p)}`), ...outcome.removed.map((p) => `removed ${shown(p)} (created in or after turn ${turn.n})`)];
    lines.push(changed.length ? `Files put back as they were before turn ${turn.n}:\n${changed.map((l) => `  ${l}`).join('\n')}` : `No file tool changed a file in turn ${turn.n} or later; no files restored.`);
    if (outcome.missed.length) lines.push(`Not restored (content not kept):\n${outcome.missed.map((m) => `  ${m}`).join('\n')}`);
    lines.push('Changes made through bash are not tracked and were not undone.');
  }
  if (outcome.conversation === 'rewound') lines.push(`Conversation rewound to before turn ${turn.n}: "${turn.prompt}"`);
  else if (outcome.conversation === 'unavailable') lines.push(`Conversation kept: ${outcome.conversationNote}.`);
  return lines.join('\n');
}
