/**
 * What is at a path now, looked at without following a link at it and without blocking on a FIFO: nothing, a
 * symbolic link, something that is not a regular file, or a regular file with its identity, mode and content hash.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync } from 'node:fs';

export type FileState =
  | { kind: 'absent' }
  | { kind: 'link'; target: string }
  | { kind: 'special'; what: string }
  | {
      kind: 'file';
      dev: number;
      ino: number;
      nlink: number;
      size: number;
      mtimeMs: number;
      mode: number;
      /** sha256 of the content; absent when the file is over the size bound or could not be read. */
      hash?: string;
      /** The bytes hashed (never saved in the index). */
      content?: Buffer;
    };

const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

export function fileState(file: string, maxBytes: number): FileState {
  let info;
  try {
    info = lstatSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent' };
    throw err;
  }
  if (info.isSymbolicLink()) return { kind: 'link', target: readlinkSync(file) };
  if (!info.isFile()) return { kind: 'special', what: info.isDirectory() ? 'a directory' : 'a device, FIFO or socket' };
  const state: FileState = { kind: 'file', dev: info.dev, ino: info.ino, nlink: info.nlink, size: info.size, mtimeMs: info.mtimeMs, mode: info.mode & 0o7777 };
  if (info.size > maxBytes) return state;
  let fd: number | undefined;
  try {
    fd = openSync(file, READ_FLAGS);
    const opened = fstatSync(fd);
    // Swapped between the look and the open: report what the look saw, without content.
    if (!opened.isFile() || opened.ino !== info.ino || opened.dev !== info.dev) return state;
    const content = readFileSync(fd);
    return { ...state, size: content.length, content, hash: createHash('sha256').update(content).digest('hex') };
  } catch {
    return state;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether the content at the path is what `known` recorded (a file's hash, else its size and time; or both absent). */
export function sameContent(known: FileState, now: FileState): boolean {
  if (known.kind !== now.kind) return false;
  if (known.kind !== 'file' || now.kind !== 'file') return known.kind === 'absent';
  if (known.hash && now.hash) return known.hash === now.hash;
  return known.size === now.size && known.mtimeMs === now.mtimeMs && known.ino === now.ino;
}
