import { ensureDir } from '../../kernel/index.js';
/**
 * Checkpoints on disk: `$KEEL_HOME/checkpoints/<session-id>/index.json` lists the session's user turns and,
 * for each, the files the file tools changed with their content from before the change, kept once as
 * `blobs/<sha256>` (folders 0700, files 0600). Bounded: per file, per session, and in number of sessions.
 */
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileState, type FileState } from './file-state.js';

export interface FileEntry {
  /** The real path of the file. */
  path: string;
  /** The blob holding its content before the turn changed it; null when it did not exist. */
  blob: string | null;
  bytes: number;
  /** Why the content was not kept (the file cannot be restored). */
  skipped?: 'too-large' | 'evicted' | 'unreadable';
  /** Its permission bits then, for a restore where the file is gone now. */
  mode?: number;
}

export interface TurnEntry {
  n: number;
  /** The first line of the prompt, for lists. */
  prompt: string;
  /** Where the prompt sits in the session's messages, and a hash of it to check it is still there. */
  messageIndex: number;
  promptHash: string;
  at: string;
  files: FileEntry[];
}

export interface CheckpointIndex {
  version: 1;
  sessionId: string;
  turns: TurnEntry[];
  /** Bytes of blobs this session keeps. */
  bytes: number;
  /**
   * Each file as Keel's own last write (a file tool, or /rewind) left it, by real path: what /rewind compares the
   * file on disk with to notice changes made outside Keel since.
   */
  written?: Record<string, FileState>;
}

export interface Limits {
  /** Files larger than this are noted but not kept. */
  maxFileBytes: number;
  /** Past this, the oldest turns' contents are dropped. */
  maxSessionBytes: number;
  /** Checkpoint folders kept; the least recently used go first. */
  maxSessions: number;
}

export const DEFAULT_LIMITS: Limits = { maxFileBytes: 10 * 1024 * 1024, maxSessionBytes: 200 * 1024 * 1024, maxSessions: 100 };

const safe = (id: string) => id.replace(/[^\w.-]/g, '_');

export const hashOf = (value: string | Buffer) => createHash('sha256').update(value).digest('hex');

export class CheckpointStore {
  readonly dir: string;
  readonly index: CheckpointIndex;

  constructor(
    readonly root: string,
    sessionId: string,
    readonly limits: Limits,
  ) {
    this.dir = path.join(root, safe(sessionId));
    this.index = this.load(sessionId);
  }

  private load(sessionId: string): CheckpointIndex {
    const file = path.join(this.dir, 'index.json');
    if (!existsSync(file)) return { version: 1, sessionId, turns: [], bytes: 0 };
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as CheckpointIndex;
      if (parsed.version !== 1 || !Array.isArray(parsed.turns)) throw new Error('unknown format');
      return { ...parsed, sessionId };
    } catch (err) {
      throw new Error(`${file}: not a checkpoint index (${(err as Error).message}); delete it to start the checkpoints of this session afresh`);
    }
  }

  /** Copies another session's checkpoints in (a fork starts with its parent's history). */
  static copy(root: string, fromId: string, toId: string): void {
    const from = path.join(root, safe(fromId));
    const to = path.join(root, safe(toId));
    if (!existsSync(from) || existsSync(to)) return;
    cpSync(from, to, { recursive: true });
  }

  save(): void {
    ensureDir(this.dir);
    const file = path.join(this.dir, 'index.json');
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(this.index), { mode: 0o600 });
    renameSync(temp, file);
  }

  lastTurn(): TurnEntry | undefined {
    return this.index.turns[this.index.turns.length - 1];
  }

  addTurn(entry: Omit<TurnEntry, 'n' | 'files'>): TurnEntry {
    const turn: TurnEntry = { n: (this.lastTurn()?.n ?? 0) + 1, files: [], ...entry };
    this.index.turns.push(turn);
    this.save();
    return turn;
  }

  /** Keeps a file's current content for `turn`, unless this turn already has it; returns the real path it keeps. */
  snapshot(turn: TurnEntry, file: string): string {
    const real = realFile(file);
    if (turn.files.some((f) => f.path === real)) return real;
    const state = fileState(real, this.limits.maxFileBytes);
    if (state.kind === 'absent') {
      turn.files.push({ path: real, blob: null, bytes: 0 });
      this.save();
      return real;
    }
    if (state.kind !== 'file') return real;
    if (state.size > this.limits.maxFileBytes) {
      turn.files.push({ path: real, blob: null, bytes: state.size, skipped: 'too-large', mode: state.mode });
      this.save();
      return real;
    }
    const content = state.content;
    if (!content) {
      turn.files.push({ path: real, blob: null, bytes: state.size, skipped: 'unreadable', mode: state.mode });
      this.save();
      return real;
    }
    const blob = hashOf(content);
    const blobFile = this.blobPath(blob);
    if (!existsSync(blobFile)) {
      mkdirSync(path.dirname(blobFile), { recursive: true, mode: 0o700 });
      writeFileSync(blobFile, content, { mode: 0o600 });
      chmodSync(blobFile, 0o600);
      this.index.bytes += content.length;
    }
    turn.files.push({ path: real, blob, bytes: content.length, mode: state.mode });
    this.evict();
    this.save();
    return real;
  }

  /** Notes how Keel's own write left `real` (after a file tool ran, or a restore). */
  noteWritten(real: string): void {
    const state = fileState(real, this.limits.maxFileBytes);
    (this.index.written ??= {})[real] = stripContent(state);
    this.save();
  }

  /** How Keel's last write left `real`, if it knows. */
  writtenState(real: string): FileState | undefined {
    return this.index.written?.[real];
  }

  blobPath(blob: string): string {
    return path.join(this.dir, 'blobs', blob);
  }

  readBlob(blob: string): Buffer {
    return readFileSync(this.blobPath(blob));
  }

  /** Drops the oldest turns' contents until the session fits its bound again (the newest turn is kept). */
  private evict(): void {
    for (const turn of this.index.turns.slice(0, -1)) {
      if (this.index.bytes <= this.limits.maxSessionBytes) return;
      for (const file of turn.files) {
        if (!file.blob) continue;
        const blob = file.blob;
        file.blob = null;
        file.skipped = 'evicted';
        if (!this.references(blob)) {
          rmSync(this.blobPath(blob), { force: true });
          this.index.bytes -= file.bytes;
        }
      }
    }
  }

  private references(blob: string): boolean {
    return this.index.turns.some((t) => t.files.some((f) => f.blob === blob));
  }

  /** Forgets turns `n` and later, and the blobs no remaining turn needs. */
  dropFrom(n: number): void {
    const kept = this.index.turns.filter((t) => t.n < n);
    const dropped = this.index.turns.filter((t) => t.n >= n);
    this.index.turns = kept;
    for (const file of dropped.flatMap((t) => t.files)) {
      if (!file.blob || this.references(file.blob) || !existsSync(this.blobPath(file.blob))) continue;
      rmSync(this.blobPath(file.blob), { force: true });
      this.index.bytes -= file.bytes;
    }
    this.save();
  }
}

/** The state without the bytes read to hash it (the index keeps the hash only). */
function stripContent(state: FileState): FileState {
  if (state.kind !== 'file' || !state.content) return state;
  const { content: _content, ...rest } = state;
  return rest;
}

/** The real path of a file, or of its folder when it does not exist yet. */
function realFile(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(file)), path.basename(file));
    } catch {
      return file;
    }
  }
}

/**
 * Removes the least recently used checkpoint folders past `maxSessions` (never `keep`). Past the limit it removes a
 * tenth more than it must, so the next starts find the folder within the limit and skip the stat of every folder
 * (a start-up cost once a user has more sessions than the limit).
 */
export function pruneSessions(root: string, maxSessions: number, keep: string): void {
  if (!existsSync(root)) return;
  const names = readdirSync(root).filter((name) => name !== safe(keep));
  // Within the limit nothing goes, so nothing needs its age (a stat per folder on every start).
  if (names.length <= maxSessions - 1) return;
  const kept = Math.max(0, maxSessions - 1 - Math.floor(maxSessions / 10));
  const dirs = names
    .map((name) => {
      try {
        return { name, used: statSync(path.join(root, name, 'index.json')).mtimeMs };
      } catch {
        return { name, used: 0 };
      }
    })
    .sort((a, b) => b.used - a.used);
  for (const stale of dirs.slice(kept)) rmSync(path.join(root, stale.name), { recursive: true, force: true });
}
