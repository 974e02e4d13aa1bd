/**
 * Confinement: every path a tool touches is resolved (`~`, `..`, symlinks, a dangling symlink's target) before
 * it is judged, and some paths are asked about in every mode.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { coreProtectedEntries, ProtectedPaths, type ProtectedMatch } from '../../kernel/index.js';

export interface PathContext {
  /** The project root, already resolved. */
  root: string;
  home: string;
  /** `$KEEL_HOME`, already resolved (empty when unknown). */
  keelHome: string;
  /** The kernel's protected paths; the core entries alone when absent (unit tests). */
  protected?: ProtectedPaths;
  /** This session's saved tool outputs (`savedOutputDir`), already resolved: readable although under `$KEEL_HOME`. */
  savedOutputs?: string;
}

export function expandHome(p: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return p;
}

/**
 * The real location of `p`: symlinks followed all the way, including a final dangling link (its target is where
 * a write would land), and missing tails joined onto their deepest existing ancestor.
 */
export function resolveReal(p: string, depth = 0): string {
  const abs = path.resolve(p);
  if (depth > 40) return abs;
  try {
    return realpathSync.native(abs);
  } catch {
    // fall through: the path, or one of its ancestors, does not exist
  }
  try {
    if (lstatSync(abs).isSymbolicLink()) return resolveReal(path.resolve(path.dirname(abs), readlinkSync(abs)), depth + 1);
  } catch {
    // not there at all
  }
  const parent = path.dirname(abs);
  if (parent === abs) return abs;
  return path.join(resolveReal(parent, depth + 1), path.basename(abs));
}

/** True when `child` is `root` or below it. `/ws-evil` is not inside `/ws`. */
export function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * True for a tool output Keel saved for this session to read on (`$KEEL_HOME/tool-outputs/<session>`, see
 * `savedOutputDir`): reading it is reading the session's own output. Other sessions' outputs are not.
 */
export function isSavedOutput(resolved: string, ctx: Pick<PathContext, 'savedOutputs'>): boolean {
  return Boolean(ctx.savedOutputs) && isInside(resolved, ctx.savedOutputs!);
}

/**
 * Why a resolved path is asked about in every mode, or undefined: the kernel's settings surface
 * (`kernel.protected`: config modules, `.git/`, `.keel/`, shell profiles, `$KEEL_HOME`, and what plugins add).
 */
export function protectedReason(resolved: string, access: 'read' | 'write', ctx: PathContext): string | undefined {
  return protectedMatch(resolved, access, ctx)?.reason;
}

/** The protected entry that covers a resolved path, with its reason (a front-matter entry only when no other applies). */
export function protectedMatch(resolved: string, access: 'read' | 'write', ctx: PathContext): ProtectedMatch | undefined {
  if (access === 'read' && isSavedOutput(resolved, ctx)) return undefined;
  return (ctx.protected ?? defaultSurface(ctx)).match(resolved, access);
}

/** How many hard links a regular file has (1 for anything else, or a path that does not exist). */
export function hardLinks(resolved: string): number {
  try {
    const info = statSync(resolved);
    return info.isFile() ? info.nlink : 1;
  } catch {
    return 1;
  }
}

function defaultSurface(ctx: PathContext): ProtectedPaths {
  const surface = new ProtectedPaths();
  for (const entry of coreProtectedEntries({ keelHome: ctx.keelHome, home: ctx.home })) surface.add(entry);
  return surface;
}

/** How far the search for a hard link's protected twin looks: folders deep, and entries in all. */
const TWIN_DEPTH = 4;
const TWIN_LIMIT = 5000;

/**
 * The read-protected file (`~/.ssh/id_rsa`, `$KEEL_HOME/auth.json`) that `resolved` is another name of, or
 * undefined. A hard link has no way back to its other names, so the folders of read-protected path entries are
 * searched for the same device and inode (bounded: they are small).
 */
export function protectedTwin(resolved: string, ctx: PathContext): string | undefined {
  let target;
  try {
    target = statSync(resolved);
  } catch {
    return undefined;
  }
  let budget = TWIN_LIMIT;
  const visit = (p: string, depth: number): string | undefined => {
    if (budget-- <= 0) return undefined;
    let info;
    try {
      info = lstatSync(p);
    } catch {
      return undefined;
    }
    if (info.isFile() && info.ino === target.ino && info.dev === target.dev) return p;
    if (!info.isDirectory() || depth >= TWIN_DEPTH) return undefined;
    let names: string[];
    try {
      names = readdirSync(p);
    } catch {
      return undefined;
    }
    for (const name of names) {
      const found = visit(path.join(p, name), depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  for (const entry of (ctx.protected ?? defaultSurface(ctx)).list()) {
    if (!entry.read || entry.path === undefined) continue;
    const found = visit(entry.path, 0);
    if (found && (ctx.protected ?? defaultSurface(ctx)).match(found, 'read')) return found;
  }
  return undefined;
}
