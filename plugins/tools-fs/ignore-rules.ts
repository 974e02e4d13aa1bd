import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { toPosix } from './paths.js';

/** Ignore files read in every folder, later ones taking precedence (as ripgrep does). */
const IGNORE_FILES = ['.gitignore', '.ignore', '.rgignore'];

/** The folder whose ignore rules apply at the top: the git root above `dir`, else `fallback` when `dir` is inside it, else `dir`. */
export function ignoreRoot(dir: string, fallback: string): string {
  for (let up = dir; ; up = path.dirname(up)) {
    if (existsSync(path.join(up, '.git'))) return up;
    if (path.dirname(up) === up) break;
  }
  const rel = path.relative(fallback, dir);
  return rel.startsWith('..') || path.isAbsolute(rel) ? dir : fallback;
}

/**
 * `.gitignore` (and `.ignore`, `.rgignore`, `.git/info/exclude`) rules of a tree, loaded per folder on demand.
 * A deeper folder's rules override a shallower one's, as in git.
 */
export class IgnoreRules {
  private readonly cache = new Map<string, Ignore | null>();

  constructor(readonly root: string) {}

  private rulesOf(dir: string): Ignore | null {
    const cached = this.cache.get(dir);
    if (cached !== undefined) return cached;
    const files = IGNORE_FILES.map((name) => path.join(dir, name));
    if (dir === this.root) files.unshift(path.join(dir, '.git', 'info', 'exclude'));
    let rules: Ignore | null = null;
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      rules ??= ignore({ allowRelativePaths: true });
      rules.add(text);
    }
    this.cache.set(dir, rules);
    return rules;
  }

  /** True when `abs` (a file, or a folder when `isDir`) is ignored by the rules of the folders above it. */
  ignored(abs: string, isDir: boolean): boolean {
    const rel = path.relative(this.root, abs);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return false;
    const parts = rel.split(path.sep);
    let state = false;
    for (let depth = 0; depth < parts.length; depth++) {
      const dir = path.join(this.root, ...parts.slice(0, depth));
      const rules = this.rulesOf(dir);
      if (!rules) continue;
      const sub = toPosix(parts.slice(depth).join(path.sep)) + (isDir ? '/' : '');
      const verdict = rules.test(sub);
      if (verdict.ignored) state = true;
      else if (verdict.unignored) state = false;
    }
    return state;
  }
}
