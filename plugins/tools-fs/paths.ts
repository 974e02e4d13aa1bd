import os from 'node:os';
import path from 'node:path';

/** Absolute path for a tool argument: `~` is the home directory, relative paths start at `cwd`. */
export function resolvePath(input: string, cwd: string): string {
  const expanded = input === '~' || input.startsWith('~/') ? path.join(os.homedir(), input.slice(1)) : input;
  return path.resolve(cwd, expanded);
}

/** How a path is shown to the model: relative to `cwd` when inside it (shorter, and valid input again), else absolute. */
export function displayPath(abs: string, cwd: string): string {
  const rel = path.relative(cwd, abs);
  if (rel === '') return '.';
  if (rel.startsWith('..') || path.isAbsolute(rel)) return abs;
  return rel;
}

/** `a/b` with forward slashes on every platform (globs and ignore rules speak POSIX). */
export function toPosix(rel: string): string {
  return rel.split(path.sep).join('/');
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
