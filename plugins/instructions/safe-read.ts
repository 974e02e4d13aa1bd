/**
 * Reading a file Keel loads by name — `AGENTS.md` and its `@imports`, and through the `project-files` service a
 * `SKILL.md`, a custom command, an output style, an agent file. A cloned repository controls these names: one may
 * be a link to a secret (`~/.ssh/id_rsa`, `.env`, `$KEEL_HOME`), to a file outside the project, to `/dev/zero` or a
 * FIFO, a hard link to a file elsewhere, or a huge file. The one place that decides what such a name may read.
 */
import { constants, realpathSync, statSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** A larger file is refused: its text would go whole into a prompt. */
export const MAX_FILE_BYTES = 1024 * 1024;

/** What a file may resolve to and how large it may be. Without `secret` and `confineTo`, only the file checks apply. */
export interface ReadRule {
  /** Why reading a resolved path is refused (a read-protected path: `kernel.protected`), else undefined. */
  secret?(real: string): string | undefined;
  /** An untrusted project's root: the file must resolve inside it and have no other hard link (which may be anywhere). */
  confineTo?: string;
  /** What `confineTo` is, for messages; default "the untrusted project". */
  confineLabel?: string;
  /** Larger files are refused (readFileSafely) or cut (readHeadSafely); default MAX_FILE_BYTES. */
  maxBytes?: number;
}

/** The rule refused the file: `reason` says why, the message is "not read: <reason>" (without the file's name). */
export class NotReadError extends Error {
  constructor(readonly reason: string) {
    super(`not read: ${reason}`);
  }
}

/** The file could not be opened (missing, no permission): "cannot be read: ENOENT", with the error's `code`. */
function cannotRead(err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  return Object.assign(new Error(`cannot be read: ${code ?? String(err)}`), { code });
}

/** Opening a FIFO for reading would wait for a writer; a non-blocking open returns at once (no effect on files). */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** `file` with symlinks resolved, or as given (absolute) when it does not exist. */
export function realPath(file: string): string {
  try {
    return realpathSync.native(file);
  } catch {
    return path.resolve(file);
  }
}

function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

function tooManyLinks(real: string, links: number, rule: ReadRule): string {
  return `${real} has ${links} hard links, so it may be a file outside ${rule.confineLabel ?? 'the untrusted project'} ${rule.confineTo}`;
}

/**
 * Where `file` really is, and why `rule` refuses it (a secret; outside the confining root or hard-linked), without
 * reading it. Read `real`, not `file`, so a link swapped after the check changes nothing.
 */
export function judgeFile(file: string, rule: ReadRule): { real: string; refused?: string } {
  const real = realPath(file);
  const secret = rule.secret?.(real);
  if (secret) return { real, refused: secret };
  if (rule.confineTo === undefined) return { real };
  if (!isInside(real, realPath(rule.confineTo))) return { real, refused: `${real} is outside ${rule.confineLabel ?? 'the untrusted project'} ${rule.confineTo}` };
  const links = statSync(real, { throwIfNoEntry: false })?.nlink ?? 1;
  if (links > 1) return { real, refused: tooManyLinks(real, links, rule) };
  return { real };
}

/**
 * `file` opened when `rule` allows it and it is a regular file (its size not yet judged). The resolved path is opened
 * without following a link swapped in since, and what is checked (type, links) is the opened file.
 */
async function openChecked(file: string, rule: ReadRule): Promise<{ handle: FileHandle; info: Stats; real: string }> {
  let real: string;
  try {
    real = realpathSync.native(file);
  } catch (err) {
    throw cannotRead(err);
  }
  const { refused } = judgeFile(real, rule);
  if (refused) throw new NotReadError(refused);
  const handle = await open(real, READ_FLAGS).catch((err: unknown) => {
    throw cannotRead(err);
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new NotReadError(`${real} is not a regular file`);
    if (rule.confineTo !== undefined && info.nlink > 1) throw new NotReadError(tooManyLinks(real, info.nlink, rule));
    return { handle, info, real };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * The text of `file` when `rule` allows it and it is a regular file of at most `rule.maxBytes`. Throws a NotReadError
 * ("not read: …") when refused, an Error ("cannot be read: ENOENT") when it cannot be opened.
 */
export async function readFileSafely(file: string, rule: ReadRule = {}): Promise<string> {
  const max = rule.maxBytes ?? MAX_FILE_BYTES;
  const { handle, info, real } = await openChecked(file, rule);
  try {
    if (info.size > max) throw new NotReadError(`${real} is larger than ${max} bytes (${info.size})`);
    // Never more than the limit and one byte, whatever the file grows to after the stat.
    const buffer = Buffer.alloc(Math.min(info.size, max) + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > max) throw new NotReadError(`${real} is larger than ${max} bytes`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** As readFileSafely, but a larger file is cut: its first `rule.maxBytes` bytes, and its whole size. */
export async function readHeadSafely(file: string, rule: ReadRule = {}): Promise<{ text: string; size: number }> {
  const max = rule.maxBytes ?? MAX_FILE_BYTES;
  const { handle, info } = await openChecked(file, rule);
  try {
    const buffer = Buffer.alloc(Math.min(info.size, max));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { text: buffer.subarray(0, bytesRead).toString('utf8'), size: info.size };
  } finally {
    await handle.close();
  }
}
