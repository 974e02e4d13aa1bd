/**
 * Loads the binary's vendor bundles (zod, the Anthropic SDK, mvdan-sh, … built by scripts/build.mjs as CommonJS
 * files in dist/bin/vendor/) through `vm.Script` with a V8 code cache, so a start-up does not pay V8 to parse and
 * compile them again. Node 20 has no compile cache for ES modules; `vm.Script` takes `cachedData`.
 *
 * A cache is only ever a hint: V8 rejects data made by another V8 or for other source, and this module checks
 * more before V8 sees a byte:
 * - a cache file names the SHA-256 of the bundle it belongs to (the build's hash, checked against the file read),
 *   and carries that hash and a SHA-256 of its payload in its header;
 * - the per-user cache lives in `$KEEL_HOME/code-cache` (0700, files 0600, both owned by this user, no symlinks),
 *   where a repository or another user cannot plant one; the build's cache lives beside the bundles in dist/;
 * - anything unexpected (missing, foreign, truncated, corrupt, rejected) means "compile from source"; a run never
 *   fails because of a cache. When neither the build's cache nor a per-user one served (another Node version or
 *   other V8 flags than the build's), a per-user cache is written (at exit, or a few seconds into a long run, so it
 *   holds what start-up and the first turn compiled). With the Node that ran the build, nothing is written.
 * `KEEL_NO_CODE_CACHE=1` turns caching off (the bundles still load, compiled from source).
 *
 * This module is bundled into the binary only; it imports nothing of Keel's.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const MAGIC = Buffer.from('KEELCC1\n', 'latin1');
const HEADER = MAGIC.length + 32 + 32;

export interface LoadOptions {
  /** The folder holding `<name>.cjs` (and the build's `<name>.cache`). */
  dir: string;
  /** The per-user cache folder, or undefined for none. */
  userCacheDir?: string;
}

interface Pending {
  script: vm.Script;
  file: string;
  sourceHash: Buffer;
}

const loaded = new Map<string, Record<string, unknown>>();
/**
 * Node 22+ hashes V8's flags differently in a process restored from a start-up snapshot, so a cache made in a plain
 * process is rejected there: the build also ships `<name>.snap.cache`, made in a process started from the snapshot,
 * which such a process reads first (where the build made none, the plain one still serves, as on Node 20).
 */
let fromSnapshot = false;

/** Called by the snapshot's main function: this process was restored from the start-up snapshot. */
export function restoredFromSnapshot(): void {
  fromSnapshot = true;
}
const pending: Pending[] = [];

/** The module table of vendor bundle `name` (`{ [specifier]: module }`), loaded once per process. */
export function vendor(name: string, hash: string): Record<string, unknown> {
  let table = loaded.get(name);
  if (!table) {
    const off = process.env.KEEL_NO_CODE_CACHE === '1';
    table = loadBundle(name, hash, { dir: bundleDir(), userCacheDir: off ? undefined : userCacheDir() }, !off);
    loaded.set(name, table);
  }
  return table;
}

/** dist/bin/vendor, found from the chunk this code was bundled into (dist/bin or dist/bin/chunks). */
function bundleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.join(path.basename(here) === 'chunks' ? path.dirname(here) : here, 'vendor');
}

/** `$KEEL_HOME/code-cache`, as cli/config-files.ts resolves `$KEEL_HOME`. */
function userCacheDir(): string {
  const home = process.env.KEEL_HOME ? path.resolve(process.env.KEEL_HOME) : path.join(homedir(), '.keel');
  return path.join(home, 'code-cache');
}

/**
 * The per-user cache file of a bundle: keyed on the bundle's hash, the Node version, the architecture and the
 * Node and V8 flags of this process (V8 rejects a cache made under other flags: one file per set).
 */
export function userCacheFile(dir: string, name: string, sourceHash: string): string {
  const flags = createHash('sha256').update(`${process.execArgv.join(' ')}\0${process.env.NODE_OPTIONS ?? ''}`).digest('hex').slice(0, 8);
  return path.join(dir, `${name}-${sourceHash.slice(0, 32)}-${process.version}-${process.arch}-${flags}.bin`);
}

/**
 * Compiles and runs `<dir>/<name>.cjs` as CommonJS, with the first acceptable code cache (per-user, then the
 * build's). `hash` is the SHA-256 (hex) the build recorded for the bundle. With `useCache` false, no cache is
 * read or written.
 */
export function loadBundle(name: string, hash: string, opts: LoadOptions, useCache = true): Record<string, unknown> {
  const file = path.join(opts.dir, `${name}.cjs`);
  const bytes = readFileSync(file);
  const sourceHash = createHash('sha256').update(bytes).digest();
  // A bundle that is not the one the build recorded (edited by hand, half-copied) runs without any cache.
  const cacheable = useCache && sourceHash.toString('hex') === hash;
  // A per-user cache exists only where the build's does not fit (another Node, other flags): that one first.
  const userFile = cacheable && opts.userCacheDir ? userCacheFile(opts.userCacheDir, name, hash) : undefined;
  const fromUser = userFile ? readUserCache(userFile, opts.userCacheDir!, sourceHash) : undefined;
  const cachedData = fromUser ?? (cacheable ? readBuildCache(opts.dir, name, sourceHash) : undefined);
  const source = `(function (exports, require, module, __filename, __dirname) {${bytes.toString('utf8')}\n})`;
  let script: vm.Script;
  try {
    script = new vm.Script(source, { filename: file, cachedData });
  } catch (err) {
    if (!cachedData) throw err;
    script = new vm.Script(source, { filename: file });
  }
  // Written only when no cache served: the build's fits the usual case, and then nothing goes to $KEEL_HOME.
  if (userFile && (!cachedData || script.cachedDataRejected)) {
    pending.push({ script, file: userFile, sourceHash });
    hookExit();
  }
  const module = { exports: {} as Record<string, unknown> };
  const factory = script.runInThisContext() as (exports: unknown, require: NodeRequire, module: unknown, filename: string, dirname: string) => void;
  factory(module.exports, createRequire(file), module, file, opts.dir);
  return module.exports;
}

/** The payload of a cache file in Keel's format for this source, or undefined. */
function parseCache(data: Buffer, sourceHash: Buffer): Buffer | undefined {
  if (data.length <= HEADER || !data.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (!data.subarray(MAGIC.length, MAGIC.length + 32).equals(sourceHash)) return undefined;
  const payload = data.subarray(HEADER);
  const digest = createHash('sha256').update(payload).digest();
  return digest.equals(data.subarray(MAGIC.length + 32, HEADER)) ? payload : undefined;
}

function readBuildCache(dir: string, name: string, sourceHash: Buffer): Buffer | undefined {
  return (fromSnapshot ? readCache(path.join(dir, `${name}.snap.cache`), sourceHash) : undefined) ?? readCache(path.join(dir, `${name}.cache`), sourceHash);
}

function readCache(file: string, sourceHash: Buffer): Buffer | undefined {
  try {
    return parseCache(readFileSync(file), sourceHash);
  } catch {
    return undefined;
  }
}

/** True when `st` is owned by this user and neither group nor others may write it (or read it, for files). */
function private_(st: { uid: number; mode: number }): boolean {
  const uid = process.getuid?.();
  return (uid === undefined || st.uid === uid) && (st.mode & 0o077) === 0;
}

/** A per-user cache, only from a private folder and a private regular file (no symlinks). */
function readUserCache(file: string, dir: string, sourceHash: Buffer): Buffer | undefined {
  try {
    const dirStat = lstatSync(dir);
    if (!dirStat.isDirectory() || !private_(dirStat)) return undefined;
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || !private_(st)) return undefined;
      return parseCache(readFileSync(fd), sourceHash);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** A cache file in Keel's format: magic, the bundle's hash, the payload's hash, the payload. */
export function encodeCache(payload: Buffer, sourceHash: Buffer): Buffer {
  return Buffer.concat([MAGIC, sourceHash, createHash('sha256').update(payload).digest(), payload]);
}

/** Writes the caches of bundles loaded without one, as the process exits. Failures are ignored. */
export function flushCaches(): void {
  for (const item of pending.splice(0)) {
    try {
      const dir = path.dirname(item.file);
      // Only inside an existing $KEEL_HOME: a folder being removed (a finished test's) is not made again.
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') continue;
      }
      const st = lstatSync(dir);
      if (!st.isDirectory() || !private_(st)) continue;
      const tmp = `${item.file}.${process.pid}.tmp`;
      const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        writeSync(fd, encodeCache(item.script.createCachedData(), item.sourceHash));
      } finally {
        closeSync(fd);
      }
      try {
        renameSync(tmp, item.file);
      } catch {
        rmSync(tmp, { force: true });
      }
    } catch {
      // no cache this time; the next run compiles from source again
    }
  }
}

/**
 * Caches are written once start-up is over: at exit, or a few seconds in for a long run. Not later: a script kept
 * for its cache makes V8 retain more with every turn (measured: 2.6 instead of 0.8 KiB a turn).
 */
const FLUSH_AFTER_MS = 3000;

function hookExit(): void {
  // Looked up on `process`, not kept in a module flag, which the start-up snapshot would restore as the build left it.
  if (process.listeners('exit').includes(flushCaches)) return;
  process.once('exit', flushCaches);
  setTimeout(flushCaches, FLUSH_AFTER_MS).unref();
}
