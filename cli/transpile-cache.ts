/**
 * The cache of transpiled config and plugin modules: `$KEEL_HOME/cache/transpiled/<key>.js`, where the key is a
 * SHA-256 of the loader's version, Keel's version, the file's path and its source, so a changed file is a new
 * entry. Code read from here runs with the user's rights, so an entry is used only when
 * - the folder is a real folder (not a symlink), owned by the user, with no rights for group or others (0700);
 * - the file is opened without following a symlink, is a regular file owned by the user, mode 0600;
 * - its first line is the HMAC-SHA-256, under a per-user secret (`key` in the same folder, 0600), of the entry's
 *   name and the code that follows: an entry edited, copied from another user or another KEEL_HOME, or planted,
 *   fails the check and the source is transpiled again.
 * Any failure here only costs a transpile: the cache never fails a run.
 */
import { createHmac, randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Bumped when the transform or the evaluation contract changes: old entries are never read again. */
export const LOADER_VERSION = 'jiti-2.7.0-async-1';

const OWNER_ONLY = 0o077;

function ownedPrivate(stat: { uid: number; mode: number }): boolean {
  const uid = process.getuid?.();
  return (uid === undefined || stat.uid === uid) && (stat.mode & OWNER_ONLY) === 0;
}

export class TranspileCache {
  private key: Buffer | undefined | null = null;

  constructor(
    readonly dir: string,
    private readonly keelVersion: string,
  ) {}

  entryName(file: string, source: string): string {
    return `${createHash('sha256').update(`${LOADER_VERSION}\0${this.keelVersion}\0${file}\0`).update(source).digest('hex')}.js`;
  }

  /** The cached code for this file and source, or undefined (missing, unsafe or tampered). */
  read(file: string, source: string): string | undefined {
    const key = this.secret(false);
    if (!key) return undefined;
    const name = this.entryName(file, source);
    const text = readPrivate(path.join(this.dir, name));
    if (text === undefined) return undefined;
    const newline = text.indexOf('\n');
    if (newline !== 64) return undefined;
    const given = Buffer.from(text.slice(0, 64), 'hex');
    const code = text.slice(65);
    const expected = mac(key, name, code);
    return given.length === expected.length && timingSafeEqual(given, expected) ? code : undefined;
  }

  /** Stores the code for this file and source; false when the folder is not safe to write. */
  write(file: string, source: string, code: string): boolean {
    const key = this.secret(true);
    if (!key) return false;
    const name = this.entryName(file, source);
    const target = path.join(this.dir, name);
    const temp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      writeExclusive(temp, `${mac(key, name, code).toString('hex')}\n${code}`);
      renameSync(temp, target);
      return true;
    } catch {
      try {
        unlinkSync(temp);
      } catch {
        // never written
      }
      return false;
    }
  }

  /** The per-user secret; made (with the folder) on the first write. Undefined when the folder is not safe. */
  private secret(create: boolean): Buffer | undefined {
    if (this.key) return this.key;
    if (this.key === undefined && !create) return undefined;
    if (create) {
      try {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      } catch {
        return (this.key = undefined);
      }
    }
    if (!safeFolder(this.dir)) return (this.key = undefined);
    const file = path.join(this.dir, 'key');
    let key = readPrivate(file);
    if (key === undefined && create) {
      try {
        writeExclusive(file, randomBytes(32).toString('hex'));
      } catch {
        // another process made it first: read theirs
      }
      key = readPrivate(file);
    }
    this.key = key && /^[0-9a-f]{64}$/.test(key) ? Buffer.from(key, 'hex') : undefined;
    return this.key;
  }
}

function mac(key: Buffer, name: string, code: string): Buffer {
  return createHmac('sha256', key).update(`${name}\0`).update(code).digest();
}

function safeFolder(dir: string): boolean {
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && ownedPrivate(stat);
  } catch {
    return false;
  }
}

/** A regular file's text, opened without following symlinks, only if it is the user's and 0600 (or stricter). */
function readPrivate(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || !ownedPrivate(stat)) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function writeExclusive(file: string, text: string): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
