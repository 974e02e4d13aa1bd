import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/** Where sessions of every project live: `$KEEL_HOME/sessions`. */
export function sessionsRoot(keelHome: string): string {
  return path.join(keelHome || path.join(os.homedir(), '.keel'), 'sessions');
}

/**
 * A project's folder name: its root path with every run of characters outside [A-Za-z0-9._] turned into
 * `-` (readable, like `-home-me-app`); long paths keep a readable head plus a hash so two never collide.
 */
export function projectSlug(projectRoot: string): string {
  const readable = path.resolve(projectRoot).replace(/[^A-Za-z0-9._]+/g, '-');
  if (readable.length <= 120) return readable;
  const hash = createHash('sha256').update(path.resolve(projectRoot)).digest('hex').slice(0, 12);
  return `${readable.slice(0, 100)}-${hash}`;
}

export function projectDir(keelHome: string, projectRoot: string): string {
  return path.join(sessionsRoot(keelHome), projectSlug(projectRoot));
}

/** Ids name files, so only a safe alphabet is accepted (no `/`, no `..`). */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function sessionFile(dir: string, id: string): string {
  return path.join(dir, `${id}.jsonl`);
}

/** Big tool outputs of a session go to files in a folder named after it, beside its JSONL. */
export function sideDir(dir: string, id: string): string {
  return path.join(dir, id);
}
