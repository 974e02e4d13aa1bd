/**
 * Protected names that do not exist yet cannot be created inside the sandbox: an empty read-only folder is
 * mounted where each would be (`agent.config.ts`, `.claude`, `.mcp.json`, `.keel` in the project root
 * and in every folder from the working folder up to it, where Keel looks for its config). bubblewrap makes the mount
 * point (an empty folder) on the host; it is removed when the last command using it ends, or, when Keel was
 * killed first, at the next start. Keel's config search takes files only, so an empty folder never loads.
 */
import { existsSync, lstatSync, readdirSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import type { ProtectedPaths } from '../../kernel/index.js';

/**
 * The names a segment pattern matches when it is a plain literal (`^\.git$`) or a literal with one group of
 * alternatives (`^agent\.config\.(ts|js)$`); undefined for any other pattern (those are left to the check after).
 */
export function literalNames(segment: RegExp): string[] | undefined {
  const m = /^\^((?:[\w-]|\\\.)*)(?:\(((?:(?:[\w-]|\\\.)+\|)*(?:[\w-]|\\\.)+)\))?((?:[\w-]|\\\.)*)\$$/.exec(segment.source);
  if (!m) return undefined;
  const un = (s: string) => s.replace(/\\\./g, '.');
  const alternatives = m[2] === undefined ? [''] : m[2].split('|');
  return alternatives.map((alt) => un(m[1]!) + un(alt) + un(m[3]!));
}

const exists = (p: string): boolean => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

const isInside = (child: string, root: string) => {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/**
 * Where to mount a placeholder: each protected literal name missing from the project root and the folders between
 * it and each of `cwds`, and each protected path inside a writable root that is missing (at its topmost missing folder).
 * Front-matter entries (`AGENTS.md`) are left out: a new one without front matter is allowed.
 */
export function placeholdersFor(surface: ProtectedPaths, root: string, cwds: string | string[], roots: string[]): string[] {
  const out = new Set<string>();
  const names = surface
    .list()
    .filter((e) => e.segment && !e.frontMatter)
    .flatMap((e) => literalNames(e.segment!) ?? [])
    // Not \`.git\`: an empty one would move where git and Keel find the project root; a new one loads nothing
    // at start, and the check after the command removes it.
    .filter((name) => name !== '.git');
  const dirs = new Set<string>();
  for (const cwd of typeof cwds === 'string' ? [cwds] : cwds) {
    for (let dir = isInside(cwd, root) ? cwd : root; isInside(dir, root); dir = path.dirname(dir)) {
      dirs.add(dir);
      if (dir === root) break;
    }
  }
  const consider = (p: string) => {
    if (exists(p)) return;
    // Inside an existing protected folder, which is mounted read-only already: nothing can be made there.
    for (let dir = path.dirname(p); isInside(dir, root) && dir !== root; dir = path.dirname(dir)) if (exists(dir) && surface.match(dir, 'write')) return;
    const hit = surface.match(p, 'write');
    if (hit && !hit.entry.frontMatter) out.add(p);
  };
  for (const dir of dirs) if (existsSync(dir)) for (const name of names) consider(path.join(dir, name));
  for (const entry of surface.list()) {
    if (entry.path === undefined || entry.frontMatter || exists(entry.path)) continue;
    const within = roots.find((r) => isInside(entry.path!, r) && entry.path !== r);
    if (!within) continue;
    let top = entry.path;
    while (path.dirname(top) !== within && !exists(path.dirname(top))) top = path.dirname(top);
    consider(top);
  }
  return [...out].sort();
}

/** Removes a placeholder left on the host, only while it is still an empty folder (never anything in it). */
export function removePlaceholder(p: string): void {
  try {
    if (lstatSync(p).isDirectory() && readdirSync(p).length === 0) rmdirSync(p);
  } catch {
    // gone already, or not empty: then it is not ours to remove
  }
}

/** True when `p` is an empty folder (what a placeholder looks like on the host). */
export function isEmptyDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory() && readdirSync(p).length === 0;
  } catch {
    return false;
  }
}
