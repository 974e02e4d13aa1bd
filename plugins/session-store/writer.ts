/**
 * Appends records to a session file: opened with O_APPEND, one record per write(2), torn tail cut on open,
 * fdatasync on demand (group commit: in the background, one in flight at a time; closing waits for none and
 * syncs what is left itself), the folders synced after the file is created (in the background too; closing syncs
 * any whose background sync has not succeeded).
 */
import { closeSync, constants, fdatasync, fdatasyncSync, fstatSync, fsync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import { ensureDir } from '../../kernel/index.js';
import { acquireLock, type SessionLock } from './lock.js';
import type { SessionRecord } from './records.js';
import type { Redactor } from './secrets.js';

export interface WriterOptions {
  fsync: boolean;
  redact: Redactor;
  /** The session id, for the lock's error message. */
  id: string;
}

export class SessionWriter {
  private fd: number | undefined;
  /** A second descriptor of the same file that background syncs use, so closing `fd` never races them. */
  private syncFd: number | undefined;
  private syncing = false;
  /** Records were appended while a sync was in flight: another follows it. */
  private syncAgain = false;
  /** Records appended by this writer, and how many of them the last sync to start covers (finished or in flight). */
  private appended = 0;
  private synced = 0;
  private lock: SessionLock | undefined;
  /** Folders whose background fsync could not start or failed: `close` syncs them itself. */
  private readonly unsyncedDirs = new Set<string>();
  /** Complete lines in the file: the next record is line `lines + 1`. */
  lines: number;

  constructor(
    readonly file: string,
    private readonly opts: WriterOptions,
    knownLines = 0,
  ) {
    this.lines = knownLines;
  }

  get isOpen(): boolean {
    return this.fd !== undefined;
  }

  /** Takes the session's lock (see lock.ts) unless held already; throws when another process holds it. */
  acquire(): void {
    this.lock ??= acquireLock(this.file, this.opts.id);
  }

  /**
   * Opens for append, creating the file (and its folders) when needed, under the session's lock. A torn last
   * line is cut back to the last newline first. Returns true when the file was new or empty, so the caller
   * writes a header.
   */
  open(): { created: boolean; cutBytes: number } {
    if (this.fd !== undefined) return { created: false, cutBytes: 0 };
    const dir = path.dirname(this.file);
    const madeDir = ensureDir(dir);
    this.acquire();
    const fd = openSync(this.file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, 0o600);
    this.fd = fd;
    const cutBytes = cutTornTail(fd);
    const created = fstatSync(fd).size === 0;
    if (created && this.opts.fsync) {
      // The file's directory entry must survive a crash, and so must every folder this call created.
      const dirs = [dir];
      for (let made = dir; madeDir !== undefined && made !== path.dirname(made); made = path.dirname(made)) {
        dirs.push(path.dirname(made));
        if (made === madeDir) break;
      }
      for (const folder of dirs) this.syncDirInBackground(folder);
    }
    if (created) this.lines = 0;
    return { created, cutBytes };
  }

  /** Writes one record as one line with a single write(2). */
  append(record: SessionRecord): void {
    if (this.fd === undefined) throw new Error(`session file ${this.file} is not open`);
    const line = Buffer.from(`${this.opts.redact(JSON.stringify(record))}\n`, 'utf8');
    let written = writeSync(this.fd, line);
    // A regular file takes the whole buffer in one call; a short write (disk full) is finished, not torn.
    while (written < line.length) written += writeSync(this.fd, line, written);
    this.lines++;
    this.appended++;
  }

  /**
   * Starts flushing the data to disk, when fsync is on, without blocking the turn: the sync runs in libuv's
   * thread pool while the next request goes out. A process killed meanwhile loses nothing (the page cache
   * holds the writes); only a power loss in that window can, and the next turn's sync covers it.
   */
  sync(): void {
    if (this.fd === undefined || !this.opts.fsync || this.synced === this.appended) return;
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    this.syncFd ??= openSync(this.file, constants.O_RDONLY);
    const fd = this.syncFd;
    this.syncing = true;
    this.synced = this.appended;
    fdatasync(fd, () => {
      this.syncing = false;
      if (this.fd === undefined) {
        closeSync(fd);
        if (this.syncFd === fd) this.syncFd = undefined;
      } else if (this.syncAgain) {
        this.syncAgain = false;
        this.sync();
      }
    });
  }

  /**
   * fsyncs a folder in libuv's thread pool while the first request goes out (on a cold disk this blocked a start
   * for milliseconds). A sync in flight needs nothing more from `close`: the process does not exit before it ends
   * (a libuv request keeps the event loop alive); one that could not start or failed, `close` does itself.
   */
  private syncDirInBackground(dir: string): void {
    let fd: number;
    try {
      fd = openSync(dir, constants.O_RDONLY);
    } catch {
      this.unsyncedDirs.add(dir); // close() tries again, and reports what fails then
      return;
    }
    fsync(fd, (err) => {
      closeSync(fd);
      if (err) this.unsyncedDirs.add(dir);
    });
  }

  /** Flushes the data to disk now, when fsync is on. */
  syncNow(): void {
    if (this.fd === undefined || !this.opts.fsync) return;
    fdatasyncSync(this.fd);
    this.synced = this.appended;
  }

  /**
   * Syncs what no sync covers yet, closes the file and releases the lock. What a sync in flight covers needs
   * nothing more: the process does not exit before it ends (a libuv request keeps the event loop alive).
   */
  close(): void {
    try {
      if (this.fd !== undefined && this.synced !== this.appended) this.syncNow();
      for (const dir of this.unsyncedDirs) {
        syncDir(dir);
        this.unsyncedDirs.delete(dir);
      }
    } finally {
      if (this.fd !== undefined) closeSync(this.fd);
      this.fd = undefined;
      // A background sync in flight closes its descriptor when it ends.
      if (this.syncFd !== undefined && !this.syncing) {
        closeSync(this.syncFd);
        this.syncFd = undefined;
      }
      this.lock?.release();
      this.lock = undefined;
    }
  }
}

/** Truncates the file after its last newline; returns the bytes removed. The fd must be readable and writable. */
export function cutTornTail(fd: number): number {
  const size = fstatSync(fd).size;
  if (size === 0) return 0;
  const end = lastNewlineEnd(fd, size);
  if (end === size) return 0;
  ftruncateSync(fd, end);
  return size - end;
}

/** The offset just after the last `\n` before `size` (0 when there is none). Reads backwards in chunks. */
export function lastNewlineEnd(fd: number, size: number): number {
  const chunk = Buffer.allocUnsafe(64 * 1024);
  let pos = size;
  while (pos > 0) {
    const len = Math.min(chunk.length, pos);
    pos -= len;
    readSync(fd, chunk, 0, len, pos);
    const at = chunk.subarray(0, len).lastIndexOf(0x0a);
    if (at !== -1) return pos + at + 1;
  }
  return 0;
}

export function syncDir(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
