/**
 * Replacing, creating and removing a file without following links and without leaving half a file behind: the new
 * content goes to a temporary file created beside it (O_EXCL|O_NOFOLLOW, through the handle), is flushed to disk
 * with its mode set, and is renamed over the name, which swaps the directory entry itself (a link planted at the
 * name is replaced, never written through). Right before the rename, the name must still be what the caller
 * expects. A new file is hard-linked into place instead, which fails on any entry at the name.
 */
import { randomBytes } from 'node:crypto';
import { constants, lstatSync, realpathSync } from 'node:fs';
import { link, mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { OpenError, openReal } from './safe-open.js';

/** What the caller saw at the name: a regular file with this identity, or nothing. */
export type Expected = { dev: number; ino: number } | 'absent';

/** The identity a name has now, without following a link at it; a link or a special file is refused. */
function identityAt(real: string, shown: string): Expected {
  let info;
  try {
    info = lstatSync(real);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
  if (info.isSymbolicLink()) throw new OpenError(`${shown} is now a symbolic link; it was left as it is.`, 'symlink');
  if (!info.isFile()) throw new OpenError(`${shown} is now ${info.isDirectory() ? 'a directory' : 'not a regular file (a device, FIFO or socket)'}; it was left as it is.`, info.isDirectory() ? 'directory' : 'special');
  if (info.nlink > 1) throw new OpenError(`${shown} has ${info.nlink} hard links, so it is also a file elsewhere; it was left as it is.`, 'moved');
  return { dev: info.dev, ino: info.ino };
}

function sameIdentity(a: Expected, b: Expected): boolean {
  if (a === 'absent' || b === 'absent') return a === b;
  return a.dev === b.dev && a.ino === b.ino;
}

/** The folder of `real` must be a real folder now: no symbolic link anywhere in its path. */
function checkFolder(real: string, shown: string): void {
  const dir = path.dirname(real);
  let now: string;
  try {
    now = realpathSync.native(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw Object.assign(new Error(`the folder of ${shown} does not exist`), { code: 'ENOENT' });
    throw err;
  }
  if (now !== dir) throw new OpenError(`a folder in the path of ${shown} now leads to ${now}; it was left as it is.`, 'moved');
}

function expectation(real: string, shown: string, expected: Expected): void {
  const now = identityAt(real, shown);
  if (!sameIdentity(now, expected)) throw new OpenError(`${shown} was replaced or changed while it was being restored; it was left as it is.`, 'moved');
}

/**
 * Replaces the file at `real` (a fully resolved path) with `bytes`, atomically: either the old content or the new
 * one is there, whatever fails (a full disk, a permission, a crash). `mode` is the new file's permission bits.
 */
export async function replaceFile(real: string, bytes: Buffer, opts: { shown: string; mode: number; expect: Expected }): Promise<void> {
  const { shown } = opts;
  // A folder removed since is made again (the caller resolved `real`: no link was in its path then).
  await mkdir(path.dirname(real), { recursive: true });
  checkFolder(real, shown);
  expectation(real, shown, opts.expect);
  const temp = await writeTemporary(real, bytes, opts);
  let renamed = false;
  try {
    // The last look before the swap: the name still holds what the caller judged, and its folder is no link.
    checkFolder(real, shown);
    expectation(real, shown, opts.expect);
    await rename(temp, real);
    renamed = true;
    await syncFolder(path.dirname(real));
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

/**
 * Creates the file at `real` (a fully resolved path) with `bytes` only when nothing is at the name: it appears
 * whole or not at all, and an existing file (or a link planted there) is never replaced, even one that appeared a
 * moment ago; that is refused with kind `exists`. Its folders are made.
 */
export async function createFile(real: string, bytes: Buffer, opts: { shown: string; mode: number }): Promise<void> {
  const { shown } = opts;
  await mkdir(path.dirname(real), { recursive: true });
  checkFolder(real, shown);
  const temp = await writeTemporary(real, bytes, opts);
  try {
    checkFolder(real, shown);
    // link() refuses any existing entry, where rename() would replace it.
    await link(temp, real);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new OpenError(`${shown} already exists`, 'exists');
    throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  await syncFolder(path.dirname(real));
}

/** `bytes` in a new temporary file beside `real`, with `mode`, flushed to disk and closed; returns its path. */
async function writeTemporary(real: string, bytes: Buffer, opts: { shown: string; mode: number }): Promise<string> {
  const temp = path.join(path.dirname(real), `.${path.basename(real)}.keel-${randomBytes(6).toString('hex')}.tmp`);
  const { handle } = await openReal(temp, 'create', opts.shown);
  try {
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, done);
      done += bytesWritten;
    }
    await handle.chmod(opts.mode & 0o7777);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  return temp;
}

/** Removes the file at `real` if it is still the one the caller expects (unlink never follows a link at the name). */
export async function removeFile(real: string, opts: { shown: string; expect: Expected }): Promise<void> {
  checkFolder(real, opts.shown);
  expectation(real, opts.shown, opts.expect);
  if (opts.expect === 'absent') return;
  await unlink(real);
  await syncFolder(path.dirname(real));
}

/** Makes a rename or unlink in `dir` durable; a file system that cannot sync folders is not an error. */
async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0)).catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // EINVAL on some file systems: the rename itself has happened
  } finally {
    await handle.close();
  }
}
