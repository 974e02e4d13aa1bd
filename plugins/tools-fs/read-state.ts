import { createHash } from 'node:crypto';
import type { Session } from '../../kernel/index.js';

/** What the session saw of a file when it last read or wrote it. */
interface Snapshot {
  mtimeMs: number;
  size: number;
  hash: string;
}

const KEY = 'tools-fs';

function reads(session: Session): Map<string, Snapshot> {
  let state = session.data.get(KEY) as { reads: Map<string, Snapshot> } | undefined;
  if (!state) {
    state = { reads: new Map() };
    session.data.set(KEY, state);
  }
  return state.reads;
}

const hashOf = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

/** The file's metadata as an open handle's `stat()` gives it. */
export type FileInfo = Pick<Snapshot, 'mtimeMs' | 'size'>;

/** Records the file as the session now knows it (after a read, a write or an edit). */
export function remember(session: Session, abs: string, content: Buffer, info: FileInfo): void {
  reads(session).set(abs, { mtimeMs: info.mtimeMs, size: info.size, hash: hashOf(content) });
}

/**
 * Why the session may not overwrite `abs`, or null when it may: it must have read the file, and the file must
 * not have changed since (a new mtime with the same bytes still counts as unchanged). `info` and `content` are
 * the file as it is now, read through the handle the write will use; without `content` (a file too large to read
 * whole) only the size and mtime can vouch for it.
 */
export function staleReason(session: Session, abs: string, shown: string, info: FileInfo, content?: Buffer): string | null {
  const seen = reads(session).get(abs);
  if (!seen) return `${shown} already exists and this session has not read it. Read it with read_file first, or change it with edit_file.`;
  if (info.mtimeMs === seen.mtimeMs && info.size === seen.size) return null;
  if (content && info.size === seen.size && hashOf(content) === seen.hash) return null;
  return `${shown} has changed on disk since this session read it. Read it again with read_file before writing.`;
}
