/**
 * After a sandboxed command: what it did to protected paths (created, changed, replaced, removed), and undoing
 * it from the copies taken before, so the settings surface is exactly as it was.
 */
import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import { hasFrontMatter, type Guarded } from './survey.js';

export type ChangeKind = 'created' | 'changed' | 'replaced' | 'removed';

export interface Change {
  path: string;
  kind: ChangeKind;
  why: string;
}

function same(a: Guarded, b: Guarded): ChangeKind | undefined {
  if (a.kind !== b.kind) return 'replaced';
  if (a.kind === 'dir') return a.mode === b.mode ? undefined : 'changed';
  if (a.kind === 'link') return a.target === b.target ? undefined : 'replaced';
  if (a.ino !== b.ino) return 'replaced';
  if (a.mode !== b.mode) return 'changed';
  if (a.content && b.content) return a.content.equals(b.content) ? undefined : 'changed';
  return a.size === b.size && a.mtimeMs === b.mtimeMs ? undefined : 'changed';
}

/** What changed between two surveys' records. A new Markdown file whose entry guards front matter only counts when it has some. */
export function compare(before: Map<string, Guarded>, after: Map<string, Guarded>): Change[] {
  const changes: Change[] = [];
  for (const [p, was] of before) {
    const now = after.get(p);
    const kind = now ? same(was, now) : 'removed';
    if (kind) changes.push({ path: p, kind, why: was.why });
  }
  for (const [p, now] of after) {
    if (before.has(p)) continue;
    if (now.frontMatter && now.kind === 'file' && !hasFrontMatter(now.content)) continue;
    changes.push({ path: p, kind: 'created', why: now.why });
  }
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}

function lstat(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

const isInside = (child: string, root: string) => child === root || child.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

export interface Reverted {
  /** One line per protected path put back, for the model and the user. */
  lines: string[];
  /** Paths that could not be put back, with the reason. */
  failed: string[];
}

/**
 * Undoes `changes`: removes what was created, puts back what was changed, replaced or removed (a fresh file
 * from the copy, so a hard link made to it is cut). A parent folder that was swapped for a symlink or a file is
 * removed and made again first, so nothing is written through a link. `roots` bound the parents it repairs.
 */
export function revert(changes: Change[], before: Map<string, Guarded>, roots: string[]): Reverted {
  const out: Reverted = { lines: [], failed: [] };
  const removed: string[] = [];
  const attempt = (p: string, line: string, act: () => void) => {
    try {
      act();
      out.lines.push(line);
    } catch (err) {
      out.failed.push(`${p}: ${(err as Error).message}`);
    }
  };
  for (const change of changes.filter((c) => c.kind === 'created').sort((a, b) => a.path.length - b.path.length)) {
    if (removed.some((r) => isInside(change.path, r))) continue;
    attempt(change.path, `${change.path}: created by the command, removed (${change.why})`, () => rmSync(change.path, { recursive: true, force: true }));
    removed.push(change.path);
  }
  const restore = changes.filter((c) => c.kind !== 'created').sort((a, b) => a.path.length - b.path.length);
  for (const change of restore) {
    const was = before.get(change.path)!;
    const verb = change.kind === 'removed' ? 'removed or moved away' : change.kind;
    attempt(change.path, `${change.path}: ${verb} by the command, restored (${change.why})`, () => {
      repairParents(change.path, roots, out);
      put(change.path, was);
    });
  }
  return out;
}

/** Makes every parent of `p` below its root a real folder again. */
function repairParents(p: string, roots: string[], out: Reverted): void {
  const root = roots.filter((r) => isInside(p, r)).sort((a, b) => b.length - a.length)[0];
  if (!root) return;
  const parts = path.relative(root, path.dirname(p)).split(path.sep).filter(Boolean);
  let dir = root;
  for (const part of parts) {
    dir = path.join(dir, part);
    const st = lstat(dir);
    if (st?.isDirectory()) continue;
    if (st) {
      rmSync(dir, { recursive: true, force: true });
      out.lines.push(`${dir}: a ${st.isSymbolicLink() ? 'symlink' : 'file'} stood where a folder holding protected paths was; removed`);
    }
    mkdirSync(dir);
  }
}

function put(p: string, was: Guarded): void {
  const now = lstat(p);
  if (was.kind === 'dir') {
    if (now && !now.isDirectory()) rmSync(p, { recursive: true, force: true });
    if (!now || !now.isDirectory()) mkdirSync(p, { mode: was.mode });
    chmodSync(p, was.mode);
    return;
  }
  if (was.kind === 'link') {
    if (now) rmSync(p, { recursive: true, force: true });
    symlinkSync(was.target!, p);
    return;
  }
  if (was.kind !== 'file') throw new Error('not a regular file; cannot be restored');
  if (!was.content) throw new Error('too large to keep a copy of; restore it yourself');
  if (now?.isDirectory()) rmSync(p, { recursive: true, force: true });
  const temp = path.join(path.dirname(p), `.keel-restore-${process.pid}-${Date.now()}`);
  writeFileSync(temp, was.content, { mode: was.mode, flag: 'wx' });
  chmodSync(temp, was.mode);
  renameSync(temp, p);
}
