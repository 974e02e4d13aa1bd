/**
 * Opening files without a check-then-use race on symbolic links. A tool first resolves the path it was given
 * to the real file (`realTarget`: symlinks followed, as the permission check judged it), then opens that real
 * path with O_NOFOLLOW, so a symbolic link swapped in at the final component since is refused instead of
 * followed, and re-checks that the path still names the opened file (a folder above it swapped for a link).
 * O_NOFOLLOW is 0 where the platform lacks it (Windows); the re-check still runs there.
 *
 * The path checks (realpath, stat) are synchronous, like the permission check's own (permissions/paths.ts): each is
 * a system call of a few microseconds on a local disk, where a thread-pool round trip costs more CPU than the call
 * and two thread switches. Opening, reading, writing and closing stay asynchronous.
 */
import { constants, fstatSync, realpathSync, statSync } from 'node:fs';
import { lstat, mkdir, open, realpath, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** Opening a FIFO for reading would wait for a writer; non-blocking open returns at once (no effect on files). */
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Why a file was not opened; `kind` lets each tool word its own message. */
export class OpenError extends Error {
  constructor(
    message: string,
    readonly kind: 'symlink' | 'directory' | 'special' | 'moved' | 'appeared' | 'exists',
  ) {
    super(message);
    this.name = 'OpenError';
  }
}

/** The real path of `abs`: symlinks resolved; for a missing file, its real folder joined with its name. */
export async function realTarget(abs: string): Promise<string> {
  try {
    return realpathSync.native(abs);
  } catch {
    const dir = path.dirname(abs);
    if (dir === abs) return abs;
    return path.join(await realTarget(dir), path.basename(abs));
  }
}

export type OpenMode = 'read' | 'update' | 'create';

const FLAGS: Record<OpenMode, number> = {
  read: constants.O_RDONLY | NOFOLLOW | NONBLOCK,
  update: constants.O_RDWR | NOFOLLOW | NONBLOCK,
  // O_EXCL also refuses any existing entry, a symbolic link included.
  create: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW,
};

export interface Opened {
  handle: FileHandle;
  info: Stats;
}

/**
 * Opens `real` (from `realTarget`) as a regular file. Throws OpenError naming `shown` when the path became a
 * symbolic link, is not a regular file, or no longer names the file that was opened; ENOENT and EEXIST pass
 * through as they are, for the caller to handle.
 */
export async function openReal(real: string, mode: OpenMode, shown: string): Promise<Opened> {
  let handle: FileHandle;
  try {
    handle = await open(real, FLAGS[mode], 0o666);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || (code === 'EEXIST' && (await isLink(real)))) {
      if (!(await realpath(real).catch(() => undefined))) {
        throw new OpenError(`${shown} is a symbolic link to a missing file; use the path of the link's target instead.`, 'symlink');
      }
      throw new OpenError(`${shown} became a symbolic link after its path was checked; it was not opened. Check the path and try again.`, 'symlink');
    }
    if (code === 'EISDIR') throw new OpenError(`${shown} is a directory, not a file.`, 'directory');
    if (code === 'ENXIO') throw new OpenError(`${shown} is not a regular file (a FIFO or socket).`, 'special');
    throw err;
  }
  try {
    const info = fstatSync(handle.fd);
    if (info.isDirectory()) throw new OpenError(`${shown} is a directory, not a file.`, 'directory');
    if (!info.isFile()) throw new OpenError(`${shown} is not a regular file (a device, FIFO or socket); file tools read and write regular files only.`, 'special');
    const now = attempt(() => statSync(real, { throwIfNoEntry: false }));
    const where = attempt(() => realpathSync.native(real));
    if (!now || now.ino !== info.ino || now.dev !== info.dev || where !== real) {
      throw new OpenError(`${shown} was moved or replaced while it was being opened; it was not used. Check the path and try again.`, 'moved');
    }
    return { handle, info };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The value, or undefined when the call throws. */
function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

async function isLink(p: string): Promise<boolean> {
  return (await lstat(p).catch(() => undefined))?.isSymbolicLink() ?? false;
}

/**
 * The whole file, read from the start whatever the handle's position. The first read asks for the size `stat`
 * gave plus one byte (to notice a file that grew since), then 64 KB at a time while reads come back full; a short
 * read of a regular file is its end. Buffers are sized to what the file holds, not 64 KB of zeroes per call, and
 * only the bytes read are copied out of them.
 */
export async function readAll(handle: FileHandle, size: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let position = 0;
  let want = Math.min(size + 1, MAX_CHUNK);
  for (;;) {
    const buf = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(buf, 0, want, position);
    if (bytesRead > 0) chunks.push(buf.subarray(0, bytesRead));
    position += bytesRead;
    if (bytesRead < want) break;
    want = GROWTH_CHUNK;
  }
  return Buffer.concat(chunks, position);
}

const MAX_CHUNK = 8 * 1024 * 1024;
const GROWTH_CHUNK = 64 * 1024;

/**
 * Replaces the file's content with `bytes`. When a write fails part-way (a full disk, a quota, an I/O error) and
 * the caller passes the content it read (`previous`), that content is written back before the error is thrown, so
 * the file is not left cut short: the space the new bytes took is free again for the old ones.
 */
export async function writeAll(handle: FileHandle, bytes: Buffer, previous?: Buffer): Promise<void> {
  try {
    await writeFrom(handle, bytes);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    if (!previous) throw new Error(`the write failed (${code}); the file may be incomplete`, { cause: err });
    try {
      await writeFrom(handle, previous);
    } catch (again) {
      const second = (again as NodeJS.ErrnoException).code ?? (again as Error).message;
      throw new Error(`the write failed (${code}), and putting the old content back failed too (${second}); the file may be incomplete`, { cause: err });
    }
    throw new Error(`the write failed (${code}); the file was put back as it was`, { cause: err });
  }
}

async function writeFrom(handle: FileHandle, bytes: Buffer): Promise<void> {
  await handle.truncate(0);
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, done);
    done += bytesWritten;
  }
}

/** Opens `real` to rewrite it, or creates it (and its folders) when missing; `created` says which. */
export async function openForWrite(real: string, shown: string): Promise<Opened & { created: boolean }> {
  try {
    return { ...(await openReal(real, 'update', shown)), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(path.dirname(real), { recursive: true });
  try {
    return { ...(await openReal(real, 'create', shown)), created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new OpenError(`${shown} appeared on disk while it was being created; read it with read_file, then try again.`, 'appeared');
    throw err;
  }
}
