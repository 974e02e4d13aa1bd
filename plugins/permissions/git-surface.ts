/**
 * Git's settings surface beyond `.git/`: the folders `core.hooksPath` points git at (husky's `.husky/`), whose
 * scripts run at the user's next commit, and the config files `include.path` / `includeIf.*.path` pull in. Found
 * by reading git's config files as git would (system, global, the repository's, its worktree's, and
 * `GIT_CONFIG_COUNT` pairs), never by running git, so nothing the repository configures runs while Keel looks.
 * Every include is followed whatever its condition (`gitdir:`, `onbranch:` …): a file another branch or folder
 * would include is protected too, and every `core.hooksPath` any of them sets, not only the one in effect now.
 */
import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseGitConfig } from './git-config.js';

export interface GitSurfaceItem {
  /** Absolute path as the config names it (symlinks not followed). */
  path: string;
  kind: 'hooks' | 'config';
  /** The config file (or `GIT_CONFIG_COUNT`) that names it. */
  from: string;
}

interface Repo {
  /** The repository's git folder (`.git`, or a worktree's folder under the main one's `worktrees/`). */
  gitDir: string;
  /** Where the shared config lives (`commondir`, for linked worktrees). */
  commonDir: string;
  /** The top of the working tree: relative hook paths resolve against it. */
  top: string;
}

/** The hooks git runs (githooks(5)), for a hooks folder too broad to protect whole. */
export const GIT_HOOK_NAMES = [
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg',
  'post-commit', 'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update', 'proc-receive', 'post-receive',
  'post-update', 'reference-transaction', 'push-to-checkout', 'pre-auto-gc', 'post-rewrite', 'sendemail-validate',
  'fsmonitor-watchman', 'p4-changelist', 'p4-prepare-changelist', 'p4-post-changelist', 'p4-pre-submit', 'post-index-change',
];

/** Git's own limit on nested includes. */
const MAX_INCLUDE_DEPTH = 10;
/** Config files larger than this are not read (git config files are a few KiB). */
const MAX_CONFIG_BYTES = 1024 * 1024;

function readSmall(file: string): string | undefined {
  try {
    // A regular file (a symlinked one too, as dotfile managers make); never a FIFO or device to block on.
    if (!statSync(file).isFile()) return undefined;
    const text = readFileSync(file, 'utf8');
    return text.length > MAX_CONFIG_BYTES ? text.slice(0, MAX_CONFIG_BYTES) : text;
  } catch {
    return undefined;
  }
}

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The repository `start` is in, as git finds it (`GIT_DIR`, else the nearest `.git` folder or `gitdir:` file up). */
export function findRepo(start: string, env: NodeJS.ProcessEnv): Repo | undefined {
  let gitDir: string | undefined;
  let top: string | undefined;
  if (env.GIT_DIR) {
    gitDir = path.resolve(start, env.GIT_DIR);
    top = env.GIT_WORK_TREE ? path.resolve(start, env.GIT_WORK_TREE) : start;
  } else {
    for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
      const dotGit = path.join(dir, '.git');
      if (isDir(dotGit)) gitDir = dotGit;
      else {
        const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readSmall(dotGit) ?? '');
        if (pointer) gitDir = path.resolve(dir, pointer[1]);
      }
      if (gitDir) {
        top = dir;
        break;
      }
      if (path.dirname(dir) === dir) return undefined;
    }
  }
  const common = readSmall(path.join(gitDir, 'commondir'))?.trim();
  return { gitDir, commonDir: common ? path.resolve(gitDir, common) : gitDir, top: top! };
}

/** A path-valued setting as git expands it: `~/` is the home folder; relative ones resolve against `base`. */
function expand(value: string, home: string, base: string): string | undefined {
  if (!value) return undefined;
  if (value === '~' || value.startsWith('~/')) return path.join(home, value.slice(1));
  // `~user/` and `%(prefix)/` name places outside the project that this reader does not resolve.
  if (value.startsWith('~') || value.startsWith('%(')) return undefined;
  return path.resolve(base, value);
}

const truthy = (v: string | undefined) => v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());

/** Husky 9 sets `core.hooksPath` to `.husky/_`, whose stubs run the scripts one folder up (`.husky/pre-commit`). */
const HUSKY_STUBS = /^_$/;

/** Every hooks folder and included config file the repository at `start` (and the user's git config) names. */
export function gitSurface(start: string, home: string, env: NodeJS.ProcessEnv = process.env): GitSurfaceItem[] {
  const repo = findRepo(start, env);
  const top = repo?.top ?? start;
  const items: GitSurfaceItem[] = [];
  const seen = new Set<string>();
  const xdg = env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(home, '.config');

  const addHooks = (value: string, from: string) => {
    const dir = expand(value, home, top);
    if (!dir) return;
    items.push({ path: dir, kind: 'hooks', from });
    if (HUSKY_STUBS.test(path.basename(dir))) items.push({ path: path.dirname(dir), kind: 'hooks', from });
  };

  const visit = (file: string, depth: number, includedBy?: string) => {
    let key = file;
    try {
      key = realpathSync.native(file);
    } catch {
      // not there (yet): protected by name
    }
    if (includedBy) items.push({ path: file, kind: 'config', from: includedBy });
    if (seen.has(key) || depth > MAX_INCLUDE_DEPTH) return;
    seen.add(key);
    const text = readSmall(file);
    if (text === undefined) return;
    for (const { key: name, value } of parseGitConfig(text)) {
      if (name === 'core.hookspath') addHooks(value, file);
      else if (name === 'include.path' || (name.startsWith('includeif.') && name.endsWith('.path'))) {
        const included = expand(value, home, path.dirname(file));
        if (included) visit(included, depth + 1, file);
      }
    }
  };

  if (!truthy(env.GIT_CONFIG_NOSYSTEM)) visit(env.GIT_CONFIG_SYSTEM ? path.resolve(env.GIT_CONFIG_SYSTEM) : '/etc/gitconfig', 0);
  if (env.GIT_CONFIG_GLOBAL) visit(path.resolve(env.GIT_CONFIG_GLOBAL), 0);
  else {
    visit(path.join(xdg, 'git', 'config'), 0);
    visit(path.join(home, '.gitconfig'), 0);
  }
  if (repo) {
    visit(path.join(repo.commonDir, 'config'), 0);
    visit(path.join(repo.gitDir, 'config.worktree'), 0);
  }
  // `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>`: settings from Keel's own environment.
  const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10);
  for (let i = 0; i < Math.min(Number.isFinite(count) ? count : 0, 100); i++) {
    const name = env[`GIT_CONFIG_KEY_${i}`]?.toLowerCase();
    const value = env[`GIT_CONFIG_VALUE_${i}`] ?? '';
    if (name === 'core.hookspath') addHooks(value, 'GIT_CONFIG_COUNT');
    else if (name && path.isAbsolute(value) && (name === 'include.path' || (name.startsWith('includeif.') && name.endsWith('.path')))) visit(value, 1, 'GIT_CONFIG_COUNT');
  }
  return items;
}
