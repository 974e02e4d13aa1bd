/**
 * An advisory lock per session file (`<id>.lock` beside it, holding the owner's pid, a token and the owner's
 * start time), so two keel processes never append to one session at once. A lock whose process is gone (a
 * `kill -9`, a power cut) is stale and taken over, and so is one whose pid now names another process (pid
 * reuse): a different start time, or, for a lock without one, a process that is not keel. Locks are released when the writer closes and, as a last resort, when the process exits.
 */
import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { KeelError } from '../../kernel/index.js';

/** Shown to the user as its own one line (exit 1), without the plugin/hook wrapping. */
export class SessionLockedError extends KeelError {
  constructor(message: string) {
    super(message, { code: 'session_locked' });
    this.name = 'SessionLockedError';
  }
}

export interface SessionLock {
  readonly file: string;
  release(): void;
}

/**
 * Lock files this process holds, removed at exit. Process-wide on purpose: the exit handler belongs to the
 * process, not to a session, and one listener serves every kernel in it.
 */
const held = new Map<string, string>();
// Read each time a lock is taken, never cached: the binary's start-up snapshot keeps module state from the
// process that built it, so a cached value would be that process's start time, and every other keel would
// take this process's live lock for a stale one (pid reuse).
const ownStartTime = () => processStart(process.pid);
const releaseHeld = () => {
  for (const [lock, owned] of held) releaseFile(lock, owned);
  held.clear();
};

export function lockFileOf(sessionFile: string): string {
  return sessionFile.replace(/\.jsonl$/, '.lock');
}

interface Owner {
  pid: number;
  token: string;
  /** The owner's start time (clock ticks after boot, from /proc), when the lock recorded it. */
  start?: string;
}

/** What a lock file says about its owner. */
function readOwner(file: string): Owner | undefined {
  try {
    const [pid, token, start] = readFileSync(file, 'utf8').trim().split(/\s+/);
    const owner: Owner = { pid: Number.isInteger(Number(pid)) && Number(pid) > 0 ? Number(pid) : 0, token: token ?? '' };
    if (start) owner.start = start;
    return owner;
  } catch {
    return undefined;
  }
}

/** A process's start time from `/proc/<pid>/stat` (field 22), or undefined where there is no /proc. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
}

/**
 * True when the lock's owner still runs: its pid is alive and is the same process that wrote the lock (same
 * start time), or — for a lock that recorded none — a keel process. Without /proc, a live pid is trusted.
 */
export function ownerRuns(owner: Owner, alive: (pid: number) => boolean = isAlive): boolean {
  if (!alive(owner.pid)) return false;
  const start = processStart(owner.pid);
  if (start === undefined) return true;
  if (owner.start) return owner.start === start;
  return /keel/i.test(commandLine(owner.pid) ?? 'keel');
}

/** True when a process with this pid exists (EPERM: it exists but belongs to another user). */
export function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock of `sessionFile` or throws a one-line SessionLockedError naming the owner. The same process
 * may take a lock it already holds (two kernels in one process append whole records with O_APPEND).
 */
export function acquireLock(sessionFile: string, id: string, alive: (pid: number) => boolean = isAlive): SessionLock {
  const file = lockFileOf(sessionFile);
  const token = randomBytes(8).toString('hex');
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      try {
        const start = ownStartTime();
        writeSync(fd, `${process.pid} ${token}${start ? ` ${start}` : ''}\n`);
      } catch (err) {
        // A full disk: the file exists but says nothing. Leave no empty lock behind.
        closeSync(fd);
        unlinkQuiet(file);
        throw err;
      }
      closeSync(fd);
      return hold(file, token);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(file);
    if (!owner) continue; // released between our open and our read: try again
    if (owner.pid !== process.pid && ownerRuns(owner, alive)) {
      throw new SessionLockedError(
        `session ${id} is in use by another keel process (pid ${owner.pid}); wait for it to end, add --fork-session to continue in a copy, or delete ${file} if no keel runs it`,
      );
    }
    // Stale (its process is gone) or ours: move it aside under a unique name, so of two processes taking over
    // the same stale lock only one removes it, then create ours.
    const aside = `${file}.${token}.stale`;
    try {
      renameSync(file, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const moved = readOwner(aside);
    if (moved && moved.token !== owner.token && moved.pid !== process.pid && ownerRuns(moved, alive)) {
      // Another process replaced the stale lock between our read and our rename: that lock is live. Put it back.
      try {
        renameSync(aside, file);
      } catch {
        unlinkQuiet(aside);
      }
      continue;
    }
    unlinkQuiet(aside);
  }
  throw new SessionLockedError(`session ${id}: could not take the lock ${file} (it keeps changing hands)`);
}

function hold(file: string, token: string): SessionLock {
  held.set(file, token);
  // Looked up on `process`, never kept in a module flag, which the start-up snapshot would restore as the build left it.
  if (!process.listeners('exit').includes(releaseHeld)) process.on('exit', releaseHeld);
  return {
    file,
    release() {
      if (held.get(file) !== token) return;
      held.delete(file);
      releaseFile(file, token);
      if (held.size === 0) process.off('exit', releaseHeld);
    },
  };
}

/** Removes the lock only while it is still ours (another owner may have taken over a lock we left stale). */
function releaseFile(file: string, token: string): void {
  if (readOwner(file)?.token === token) unlinkQuiet(file);
}

function unlinkQuiet(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
