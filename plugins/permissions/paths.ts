/**
 * Confinement: every path a tool touches is resolved (`~`, `..`, symlinks, a dangling symlink's target) before
 * it is judged, and some paths are asked about in every mode.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';

export interface PathContext {
  /** The project root, already resolved. */
  root: string;
  home: string;
  /** `$KEEL_HOME`, already resolved (empty when unknown). */
  keelHome: string;
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

const PROFILES = new Set([
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.zshenv',
  '.zlogin',
  '.zlogout',
  '.kshrc',
  '.mkshrc',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.inputrc',
]);

const CONFIG_FILE = /^agent\.config\.(ts|mts|cts|js|mjs|cjs|json)$/;

/**
 * Folders of `$KEEL_HOME` that hold tool outputs Keel cut or summarised and told the model to read on
 * (compact-micro, compact-api-micro): reading them is reading the session's own output, not settings.
 */
const READABLE_IN_HOME = [['tool-outputs'], ['cache', 'compact-api-micro']];

/** True for a tool output Keel saved under `$KEEL_HOME` for the model to read on. */
export function isSavedOutput(resolved: string, keelHome: string): boolean {
  return Boolean(keelHome) && READABLE_IN_HOME.some((dir) => isInside(resolved, path.join(keelHome, ...dir)));
}

/**
 * Why a resolved path is asked about in every mode, or undefined. Writes: `.git/`, `.keel/` (but not
 * `.keel/memory/`), `agent.config.*`, shell profiles and `$KEEL_HOME`. Reads: `$KEEL_HOME` (it holds the API key).
 */
export function protectedReason(resolved: string, access: 'read' | 'write', ctx: PathContext): string | undefined {
  if (ctx.keelHome && isInside(resolved, ctx.keelHome)) {
    if (!(access === 'read' && isSavedOutput(resolved, ctx.keelHome))) return `${resolved} is in KEEL_HOME (Keel's own settings, trust and credentials)`;
  }
  if (access === 'read') return undefined;
  const segments = resolved.split(path.sep);
  if (segments.includes('.git')) return `${resolved} is inside a .git directory (hooks and config run code)`;
  const base = path.basename(resolved);
  if (CONFIG_FILE.test(base)) return `${resolved} is a Keel config file (it runs as code)`;
  if (PROFILES.has(base) || resolved === path.join(ctx.home, '.config', 'fish', 'config.fish') || /^\/etc\/(profile|bash\.bashrc|zsh)/.test(resolved)) {
    return `${resolved} is a shell profile`;
  }
  if (isInside(resolved, ctx.root)) {
    const rel = path.relative(ctx.root, resolved).split(path.sep);
    if (rel[0] === '.keel' && !(rel[1] === 'memory' && rel.length > 1)) return `${resolved} is in .keel/ (Keel's project state)`;
  }
  return undefined;
}
