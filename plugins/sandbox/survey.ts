/**
 * Finding the settings surface on disk: every protected path in the places a sandboxed command may write, with
 * a copy of each file, plus the mounts that keep the existing ones read-only and impossible to rename away.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { ProtectedPaths } from '../../kernel/index.js';

export interface Guarded {
  kind: 'file' | 'dir' | 'link' | 'other';
  mode: number;
  ino: number;
  size: number;
  mtimeMs: number;
  /** The file's bytes, kept to restore it (undefined when over the copy budget). */
  content?: Buffer;
  /** A symlink's target. */
  target?: string;
  /** Why it is protected, from the entry that matched. */
  why: string;
  /** Protected only when it holds YAML front matter (`AGENTS.md`): a new one without is fine. */
  frontMatter?: boolean;
}

export interface Survey {
  /** Every protected path found, by absolute path. */
  records: Map<string, Guarded>;
  /** Existing protected files and folders to bind read-only. */
  readOnly: string[];
  /** Folders bound onto themselves so they cannot be renamed or removed (`.git`, parents of protected paths). */
  pinned: string[];
  /** Writable openings inside read-only protected folders (`.keel/memory`). */
  writable: string[];
  /** Folders read. */
  dirs: number;
  /** Every project folder walked (in walk order, parents first), with the protected names found in it. */
  index: Map<string, FolderState>;
  /** When the walk started (ms since the epoch). */
  startedAt: number;
}

interface FolderState {
  ino: number;
  mtimeMs: number;
  hits: string[];
}

/**
 * A folder changed since an earlier walk unless its inode and mtime are the same and that mtime is older than
 * the walk by more than this: file times come from a coarse clock, so a change right after a read could keep it.
 */
const MTIME_MARGIN_MS = 1000;

/** Folders never walked: dependency trees and caches, which Keel never loads settings from. */
export const SKIPPED = new Set([
  'node_modules', 'bower_components', '.pnpm-store', '.yarn', '__pycache__', '.venv', 'venv', '.tox', '.mypy_cache',
  '.pytest_cache', '.ruff_cache', '.gradle', '.next', '.nuxt', '.turbo', '.cache', '.parcel-cache',
]);

/** Bytes of protected files copied per walk at most (each one at most MAX_FILE). */
const MAX_COPY = 64 * 1024 * 1024;
const MAX_FILE = 8 * 1024 * 1024;

/**
 * Inside a `.git` folder, the parts that run code or redirect git to other ones (relative to the `.git`
 * folder, also inside submodules' and worktrees' git dirs); objects, refs and the index stay git's own.
 */
export const GIT_GUARDED = /^(?:(?:modules|worktrees)\/.+\/)?(?:config|config\.worktree|commondir|gitdir|hooks(?:\/.*)?)$/;
/** Folders inside `.git` that can hold guarded parts. */
const GIT_WALKED = /^(?:modules|worktrees)(?:\/.+)?$/;
const GIT_DATA = new Set(['objects', 'refs', 'logs', 'lfs', 'rr-cache', 'info']);

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n/;

export function hasFrontMatter(content: Buffer | undefined): boolean {
  return content !== undefined && FRONT_MATTER.test(content.subarray(0, 16).toString('utf8'));
}

function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

function lstat(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function describe(p: string, st: Stats, why: string, frontMatter: boolean | undefined, copy: boolean): Guarded {
  const kind = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  const rec: Guarded = { kind, mode: st.mode & 0o7777, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, why, frontMatter };
  if (kind === 'link') rec.target = readlinkSync(p);
  if (kind === 'file' && copy && st.size <= MAX_FILE) {
    try {
      rec.content = readFileSync(p);
    } catch {
      // unreadable: compared by size, time and inode only
    }
  }
  return rec;
}

/** The record of the protected path `p` as it is now (nothing below it), or undefined when it is gone or not protected. */
export function recordOf(surface: ProtectedPaths, p: string): Guarded | undefined {
  const st = lstat(p);
  const hit = st && surface.match(p, 'write');
  return st && hit ? describe(p, st, hit.entry.why, hit.entry.frontMatter, true) : undefined;
}

/**
 * Walks the whole of `project` (skipping SKIPPED folders; no bound, so no count of new folders can hide a name) and looks at the protected path entries inside `roots` (the
 * project and the extra writable folders), recording each protected path it finds. With `previous` (the walk
 * before a command), folders that did not change are not read again.
 */
export function survey(surface: ProtectedPaths, project: string, roots: string[], previous?: Survey): Survey {
  const out: Survey = { records: new Map(), readOnly: [], pinned: [], writable: [], dirs: 0, index: new Map(), startedAt: Date.now() };
  let copied = 0;
  const segments = surface.list().filter((e) => e.segment);
  const pathEntries = surface.list().filter((e) => e.path !== undefined && roots.some((r) => isInside(e.path!, r)));

  const record = (p: string, st: Stats, why: string, frontMatter?: boolean) => {
    const rec = describe(p, st, why, frontMatter, copied + st.size <= MAX_COPY);
    copied += rec.content?.length ?? 0;
    out.records.set(p, rec);
  };

  /** Records `p` and everything below it that is still protected; `.keel/memory`-style openings stay writable. */
  const guardTree = (p: string, depth = 0) => {
    const st = lstat(p);
    const hit = surface.match(p, 'write');
    if (!st || !hit || out.records.has(p)) return;
    record(p, st, hit.entry.why, hit.entry.frontMatter);
    if (!st.isDirectory() || depth > 16 || hit.entry.shallow) return;
    out.dirs++;
    for (const name of list(p)) {
      const child = path.join(p, name);
      if (surface.match(child, 'write')) guardTree(child, depth + 1);
      else if (lstat(child)) out.writable.push(child);
    }
  };

  /** A topmost protected path: recorded, bound read-only (a symlink's target instead of the link). */
  const guardRoot = (p: string) => {
    const st = lstat(p);
    if (!st) return;
    guardTree(p);
    if (!st.isSymbolicLink()) out.readOnly.push(p);
    else {
      try {
        out.readOnly.push(realpathSync(p));
      } catch {
        // dangling: the link itself is compared afterwards
      }
    }
  };

  /** A `.git` folder: pinned (cannot be renamed), its guarded parts recorded and read-only. */
  const guardGit = (gitDir: string) => {
    const st = lstat(gitDir);
    if (!st) return;
    const why = surface.match(gitDir, 'write')?.entry.why ?? 'inside a .git directory';
    record(gitDir, st, why);
    if (!st.isDirectory()) {
      out.readOnly.push(gitDir);
      return;
    }
    out.pinned.push(gitDir);
    const visit = (dir: string, rel: string, depth: number) => {
      out.dirs++;
      for (const name of list(dir)) {
        const childRel = rel ? `${rel}/${name}` : name;
        const child = path.join(dir, name);
        if (GIT_GUARDED.test(childRel)) guardRoot(child);
        else if (depth < 8 && !GIT_DATA.has(name) && GIT_WALKED.test(childRel) && lstat(child)?.isDirectory()) visit(child, childRel, depth + 1);
      }
    };
    visit(gitDir, '', 0);
  };

  const isHit = (name: string, child: string) => name === '.git' || segments.some((e) => e.segment!.test(name)) || pathEntries.some((e) => isInside(child, e.path!));
  const onHit = (name: string, child: string, isDir: boolean, queue: string[]) => {
    if (name === '.git') guardGit(child);
    else if (surface.match(child, 'write')) guardRoot(child);
    else if (isDir) queue.push(child);
  };
  /** Reads `dir` and everything below it, except folders `skip` says are handled elsewhere. */
  const walk = (start: string, skip?: Map<string, FolderState>) => {
    const queue = [start];
    while (queue.length > 0) {
      const dir = queue.pop()!;
      out.dirs++;
      const st = lstat(dir);
      let names: Array<{ name: string; isDirectory(): boolean }>;
      try {
        names = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      const state: FolderState = { ino: st?.ino ?? 0, mtimeMs: st?.mtimeMs ?? 0, hits: [] };
      out.index.set(dir, state);
      for (const dirent of names) {
        const child = path.join(dir, dirent.name);
        if (isHit(dirent.name, child)) {
          state.hits.push(dirent.name);
          onHit(dirent.name, child, dirent.isDirectory(), queue);
        } else if (dirent.isDirectory() && !SKIPPED.has(dirent.name) && !skip?.has(child)) queue.push(child);
      }
    }
  };

  if (!previous) walk(project);
  else {
    // Again after a command: folders whose inode and mtime did not change have the same names, so only their
    // protected names are looked at again; changed and new folders are read. A folder counts only when its
    // parent was confirmed a real folder in this pass, so nothing is reached through a planted symlink.
    const confirmed = new Set<string>();
    for (const [dir, was] of previous.index) {
      if (dir !== project && !confirmed.has(path.dirname(dir))) continue;
      const st = lstat(dir);
      if (!st?.isDirectory()) continue;
      confirmed.add(dir);
      const same = st.ino === was.ino && st.mtimeMs === was.mtimeMs && st.mtimeMs < previous.startedAt - MTIME_MARGIN_MS;
      if (!same) {
        walk(dir, previous.index);
        continue;
      }
      out.index.set(dir, was);
      out.dirs++;
      const queue: string[] = [];
      for (const name of was.hits) {
        const child = path.join(dir, name);
        onHit(name, child, Boolean(lstat(child)?.isDirectory()), queue);
      }
      for (const sub of queue) if (!previous.index.has(sub)) walk(sub, previous.index);
    }
  }
  // Entries named by path (the shell profiles when `~` is writable) wherever they are, walked or not.
  for (const entry of pathEntries) if (!out.records.has(entry.path!)) guardRoot(entry.path!);

  // Parents of read-only mounts are pinned too: renaming a parent would carry the mount away with it.
  const pins = new Set(out.pinned);
  for (const p of [...out.readOnly, ...out.pinned]) {
    const root = roots.find((r) => isInside(p, r));
    if (!root) continue;
    for (let dir = path.dirname(p); dir !== root && isInside(dir, root); dir = path.dirname(dir)) pins.add(dir);
  }
  out.pinned = [...pins];
  return out;
}
