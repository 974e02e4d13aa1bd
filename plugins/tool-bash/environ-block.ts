/**
 * Clears variables from this process's original environment block, the bytes `/proc/<pid>/environ` shows to any
 * process of the same user, so a command cannot read a secret there that its own environment does not hold.
 *
 * Each variable is first re-set (`delete` then set again: glibc's `unsetenv` drops every occurrence from `environ`,
 * `setenv` adds one heap copy), so `process.env` keeps returning it and nothing points into the block any more; then
 * its `NAME=value` entries in the block (fields 50 and 51 of /proc/self/stat bound it) are overwritten with zero
 * bytes through /proc/self/mem. Linux only; anywhere it cannot be done it changes nothing and says why.
 *
 * Used by tool-bash (Keel's credentials, when they are scrubbed from commands) and by the GitHub Action (everything
 * it does not give Keel); the Action's build bundles this file.
 */
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

export interface EnvironHideResult {
  /** Names whose entries were cleared from the block (each occurrence), in the block's order. */
  hidden: string[];
  /** Why nothing, or not everything, was cleared; absent when every entry asked for is gone. */
  reason?: string;
}

/** What the module touches, replaceable in tests. */
export interface EnvironBlockAccess {
  platform: string;
  /** A worker thread's process.env is a copy: re-setting it would leave the real environ pointing at zeros. */
  mainThread: boolean;
  env: NodeJS.ProcessEnv;
  readStat(): string;
  readBlock(): Buffer;
  /** Opens /proc/self/mem for reading and writing: a file descriptor. */
  openMemory(): number;
  read(fd: number, into: Buffer, position: number): number;
  write(fd: number, from: Buffer, position: number): number;
  close(fd: number): void;
}

/** Read when called, never at module load: a module evaluated into the start-up snapshot runs in another process. */
const procAccess = (): EnvironBlockAccess => ({
  platform: process.platform,
  mainThread: isMainThread,
  env: process.env,
  readStat: () => readFileSync('/proc/self/stat', 'latin1'),
  readBlock: () => readFileSync('/proc/self/environ'),
  openMemory: () => openSync('/proc/self/mem', 'r+'),
  read: (fd, into, position) => readSync(fd, into, 0, into.length, position),
  write: (fd, from, position) => writeSync(fd, from, 0, from.length, position),
  close: (fd) => closeSync(fd),
});

interface Entry {
  name: string;
  offset: number;
  bytes: Buffer;
}

/** The block's bounds: `env_start` and `env_end`, fields 50 and 51 counted from 1 (after `(comm)`, which may hold spaces). */
export function environBounds(stat: string): { start: number; end: number } | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = stat.slice(close + 2).trim().split(' ');
  // fields[0] is field 3 (state).
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start <= 0 || end < start) return undefined;
  return { start, end };
}

function entriesNamed(block: Buffer, wanted: (name: string) => boolean): Entry[] {
  const found: Entry[] = [];
  for (let offset = 0; offset < block.length; ) {
    let end = block.indexOf(0, offset);
    if (end < 0) end = block.length;
    const equals = block.indexOf(0x3d, offset); // '='
    if (equals > offset && equals < end) {
      const name = block.toString('utf8', offset, equals);
      if (wanted(name)) found.push({ name, offset, bytes: block.subarray(offset, end) });
    }
    offset = end + 1;
  }
  return found;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Clears every entry of the given names (or of the names `names` accepts) from the environment block, keeping
 * `process.env` as it was. Never throws; the result names what was cleared and, if anything was not, why.
 */
export function hideFromEnvironBlock(names: Iterable<string> | ((name: string) => boolean), access: Partial<EnvironBlockAccess> = {}): EnvironHideResult {
  const io: EnvironBlockAccess = { ...procAccess(), ...access };
  const wanted = typeof names === 'function' ? names : ((set: Set<string>) => (name: string) => set.has(name))(new Set(names));
  if (io.platform !== 'linux') return { hidden: [], reason: `${io.platform} has no /proc/self/environ to clear` };
  if (!io.mainThread) return { hidden: [], reason: "a worker thread cannot re-set the process's environment" };
  let bounds: ReturnType<typeof environBounds>;
  let block: Buffer;
  try {
    bounds = environBounds(io.readStat());
    block = io.readBlock();
  } catch (err) {
    return { hidden: [], reason: `cannot read /proc/self: ${errorText(err)}` };
  }
  if (!bounds) return { hidden: [], reason: '/proc/self/stat has no env_start/env_end fields' };
  if (block.length !== bounds.end - bounds.start) return { hidden: [], reason: `/proc/self/environ holds ${block.length} bytes, not the ${bounds.end - bounds.start} its bounds say` };
  const entries = entriesNamed(block, wanted);
  if (entries.length === 0) return { hidden: [] };
  let fd: number;
  try {
    fd = io.openMemory();
  } catch (err) {
    return { hidden: [], reason: `cannot open /proc/self/mem for writing: ${errorText(err)}` };
  }
  const cleared: string[] = [];
  const left: { name: string; why: string }[] = [];
  try {
    for (const name of new Set(entries.map((e) => e.name))) {
      const value = io.env[name];
      if (value === undefined) continue;
      delete io.env[name];
      io.env[name] = value;
    }
    for (const entry of entries) {
      const position = bounds.start + entry.offset;
      try {
        // The bytes there now must be the entry read from /proc/self/environ, or this would overwrite something else.
        const current = Buffer.alloc(entry.bytes.length);
        if (io.read(fd, current, position) !== current.length || !current.equals(entry.bytes)) {
          left.push({ name: entry.name, why: 'the block changed under it' });
          continue;
        }
        const zeros = Buffer.alloc(entry.bytes.length);
        if (io.write(fd, zeros, position) !== zeros.length) {
          left.push({ name: entry.name, why: 'a short write' });
          continue;
        }
        cleared.push(entry.name);
      } catch (err) {
        left.push({ name: entry.name, why: errorText(err) });
      }
    }
  } finally {
    io.close(fd);
  }
  // A name counts as hidden once none of its entries is left.
  const failed = new Set(left.map((l) => l.name));
  const hidden = [...new Set(cleared)].filter((name) => !failed.has(name));
  return left.length ? { hidden, reason: `not cleared: ${left.map((l) => `${l.name} (${l.why})`).join(', ')}` } : { hidden };
}
