/**
 * Rewinding: put files and/or the conversation back to how they were before a user turn. Files are first checked,
 * all of them, before any is touched: each must still be at the real path recorded (no symbolic link made in its
 * path since), be a regular file with one link (or be absent), be as Keel's last write left it (else it was changed
 * outside Keel, and only `--force` overwrites that), and pass the permission policy as a write_file would. Then each
 * is restored atomically or removed, and the outcome says exactly which were and which were not.
 */
import path from 'node:path';
import type { MessageParam, Session } from '../../kernel/index.js';
import { fileState, sameContent, type FileState } from './file-state.js';
import { hashOf, type CheckpointStore, type FileEntry, type TurnEntry } from './store.js';

export type RewindTarget = 'both' | 'files' | 'conversation';

/** What /rewind needs from the file tools' `safe-files` service (plugin tools-fs). */
export interface SafeFilesLike {
  realTarget(abs: string): Promise<string>;
  replace(real: string, bytes: Buffer, opts: { shown: string; mode: number; expect: { dev: number; ino: number } | 'absent' }): Promise<void>;
  remove(real: string, opts: { shown: string; expect: { dev: number; ino: number } | 'absent' }): Promise<void>;
}

export interface RewindHost {
  files: SafeFilesLike;
  /** The permission policy's verdict on writing (or removing) `file`: undefined when allowed, else why not. */
  judge(file: string, action: Action): Promise<string | undefined>;
  force: boolean;
  cwd: string;
}

export interface Action {
  file: string;
  kind: 'restore' | 'remove';
  /** The content to put back (restore). */
  content?: Buffer;
  now: FileState;
  mode: number;
}

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

/** A rewind that did not run, or ran only in part: its message lists each file and why. */
export class RewindError extends Error {
  constructor(
    message: string,
    readonly outcome?: RewindOutcome,
  ) {
    super(message);
    this.name = 'RewindError';
  }
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

export function shownPath(p: string, cwd: string): string {
  const rel = path.relative(cwd, p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}

const list = (lines: string[]) => lines.map((l) => `  ${l}`).join('\n');

export async function rewind(store: CheckpointStore, session: Session, n: number, target: RewindTarget, host: RewindHost): Promise<RewindOutcome> {
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
    const actions = await plan(store, turns.slice(at), n, host, outcome);
    const failed = await apply(store, actions, host, outcome);
    if (failed.length > 0) {
      const done = [...outcome.restored.map((p) => `restored ${shownPath(p, host.cwd)}`), ...outcome.removed.map((p) => `removed ${shownPath(p, host.cwd)}`)];
      throw new RewindError(
        [
          `/rewind ${n} stopped short: ${failed.length} of ${actions.length} file${actions.length === 1 ? '' : 's'} could not be put back${target === 'both' ? ', so the conversation was kept' : ''}.`,
          done.length ? `Put back:\n${list(done)}` : 'No file was put back.',
          `Not put back (each is as it was before this /rewind):\n${list(failed)}`,
        ].join('\n'),
        outcome,
      );
    }
  }

  if (target !== 'files' && outcome.conversation !== 'unavailable') {
    session.messages.splice(turn.messageIndex);
    outcome.conversation = 'rewound';
    store.dropFrom(n);
  }
  return outcome;
}

/** Checks every file before any is touched; throws, changing nothing, when one is in the way. */
async function plan(store: CheckpointStore, turns: TurnEntry[], n: number, host: RewindHost, outcome: RewindOutcome): Promise<Action[]> {
  const refused: string[] = [];
  const outside: string[] = [];
  const actions: Action[] = [];
  for (const [file, entry] of earliest(turns)) {
    const shown = shownPath(file, host.cwd);
    if (entry.skipped) {
      outcome.missed.push(`${shown} (${entry.skipped === 'too-large' ? 'too large to keep' : entry.skipped === 'evicted' ? 'dropped to keep checkpoints within their size bound' : 'it could not be read'})`);
      continue;
    }
    const real = await host.files.realTarget(file);
    if (real !== file) {
      refused.push(`${shown}: its path now leads to ${real} (a symbolic link was made in its path since the checkpoint)`);
      continue;
    }
    const now = fileState(file, store.limits.maxFileBytes);
    if (now.kind === 'link') {
      refused.push(`${shown}: it is now a symbolic link to ${now.target}`);
      continue;
    }
    if (now.kind === 'special') {
      refused.push(`${shown}: it is now ${now.what}, not a regular file`);
      continue;
    }
    if (now.kind === 'file' && now.nlink > 1) {
      refused.push(`${shown}: it has ${now.nlink} hard links, so it is also a file elsewhere that a restore would change or cut loose`);
      continue;
    }
    if (entry.blob === null && now.kind === 'absent') continue;
    const known = store.writtenState(file);
    if (!known) outside.push(`${shown} (Keel has no record of how its last write left it)`);
    else if (!sameContent(known, now)) outside.push(`${shown} (${now.kind === 'absent' ? 'deleted' : known.kind === 'absent' ? 'created' : 'changed'} outside Keel since Keel last wrote it)`);
    let content: Buffer | undefined;
    if (entry.blob !== null) {
      try {
        content = store.readBlob(entry.blob);
      } catch (err) {
        refused.push(`${shown}: its saved content cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
        continue;
      }
      if (hashOf(content) !== entry.blob) {
        refused.push(`${shown}: its saved content in ${store.blobPath(entry.blob)} is damaged`);
        continue;
      }
    }
    const mode = now.kind === 'file' ? now.mode : (entry.mode ?? 0o644);
    actions.push(entry.blob === null ? { file, kind: 'remove', now, mode } : { file, kind: 'restore', content, now, mode });
  }
  const advice = `Nothing was changed. Move what is in the way, or rewind only the conversation (/rewind ${n} conversation).`;
  if (refused.length) throw new RewindError(`cannot rewind the files to before turn ${n}:\n${list(refused)}\n${advice}`);
  if (outside.length && !host.force) {
    throw new RewindError(
      `these files changed outside Keel since it last wrote them, and /rewind ${n} would overwrite or delete those changes:\n${list(outside)}\nNothing was changed. Run /rewind ${n} --force to put them back anyway (their current content is lost), or save the changes first.`,
    );
  }
  for (const action of actions) {
    const why = await host.judge(action.file, action);
    if (why) refused.push(`${shownPath(action.file, host.cwd)}: ${why}`);
  }
  if (refused.length) throw new RewindError(`the permission policy refused part of /rewind ${n}:\n${list(refused)}\n${advice}`);
  return actions;
}

/** Restores or removes each file; one that fails does not stop the others. Returns what failed, with why. */
async function apply(store: CheckpointStore, actions: Action[], host: RewindHost, outcome: RewindOutcome): Promise<string[]> {
  const failed: string[] = [];
  for (const action of actions) {
    const shown = shownPath(action.file, host.cwd);
    const expect = action.now.kind === 'file' ? { dev: action.now.dev, ino: action.now.ino } : ('absent' as const);
    try {
      if (action.kind === 'remove') {
        await host.files.remove(action.file, { shown, expect });
        outcome.removed.push(action.file);
      } else {
        await host.files.replace(action.file, action.content!, { shown, mode: action.mode, expect });
        outcome.restored.push(action.file);
      }
    } catch (err) {
      failed.push(`${shown}: ${describeFailure(err)}`);
      continue;
    }
    try {
      store.noteWritten(action.file);
    } catch {
      // The file is back; only the note of how Keel left it is missing (the next /rewind will ask for --force).
    }
  }
  return failed;
}

function describeFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const known: Record<string, string> = {
    EACCES: 'permission denied (EACCES)',
    EPERM: 'operation not permitted (EPERM)',
    ENOSPC: 'the disk is full (ENOSPC)',
    EDQUOT: 'the disk quota is used up (EDQUOT)',
    EROFS: 'the file system is read-only (EROFS)',
    ENOENT: 'its folder is gone (ENOENT)',
  };
  if (code && known[code]) return known[code]!;
  return (err as Error).message ?? String(err);
}

export function describeOutcome(outcome: RewindOutcome, cwd: string, target: RewindTarget): string {
  const lines: string[] = [];
  const { turn } = outcome;
  if (target !== 'conversation') {
    const changed = [...outcome.restored.map((p) => `restored ${shownPath(p, cwd)}`), ...outcome.removed.map((p) => `removed ${shownPath(p, cwd)} (created in or after turn ${turn.n})`)];
    lines.push(changed.length ? `Files put back as they were before turn ${turn.n}:\n${list(changed)}` : `No file tool changed a file in turn ${turn.n} or later; no files restored.`);
    if (outcome.missed.length) lines.push(`Not restored (content not kept):\n${list(outcome.missed)}`);
    lines.push('Changes made through bash are not tracked and were not undone.');
  }
  if (outcome.conversation === 'rewound') lines.push(`Conversation rewound to before turn ${turn.n}: "${turn.prompt}"`);
  else if (outcome.conversation === 'unavailable') lines.push(`Conversation kept: ${outcome.conversationNote}.`);
  return lines.join('\n');
}
