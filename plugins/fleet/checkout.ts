/**
 * A task's own checkout under the work folder: a clone of `repo` at `ref`, or a git worktree of `cwd` (a copy when
 * `cwd` is not in a git repository), removed after the run. Its diff against where it started is the task's patch.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Task } from './tasks.js';

export interface Checkout {
  dir: string;
  /** The commit the checkout started from. */
  base: string;
  remove(): Promise<void>;
}

function git(args: string[], cwd: string, input?: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...env } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args[0]} failed: ${(stderr || err.message).trim().split('\n').pop()}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

export async function makeCheckout(task: Task, workDir: string): Promise<Checkout> {
  mkdirSync(workDir, { recursive: true });
  const dir = path.join(workDir, `${task.id}-${randomUUID().slice(0, 8)}`);
  if (task.repo) {
    try {
      await git(['clone', '--quiet', '--no-checkout', '--', task.repo, dir], workDir);
      const ref = task.ref ?? 'HEAD';
      await git(['checkout', '--quiet', '--detach', ref], dir).catch(() => git(['checkout', '--quiet', '--detach', `origin/${ref}`], dir));
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`task ${task.id}: cannot check out ${task.repo}${task.ref ? ` at ${task.ref}` : ''}: ${(err as Error).message}`);
    }
    await identity(dir);
    return { dir, base: (await git(['rev-parse', 'HEAD'], dir)).trim(), remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const source = task.cwd!;
  const top = await git(['rev-parse', '--show-toplevel'], source).then((out) => out.trim(), () => undefined);
  if (!top) {
    // Not a repository: a copy, made one so its diff can be taken.
    cpSync(source, dir, { recursive: true });
    await git(['init', '--quiet'], dir);
    await identity(dir);
    await git(['add', '-A'], dir);
    await git(['commit', '--quiet', '--allow-empty', '-m', 'keel fleet: start'], dir);
    return { dir, base: (await git(['rev-parse', 'HEAD'], dir)).trim(), remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  try {
    await git(['worktree', 'add', '--quiet', '--detach', dir, task.ref ?? 'HEAD'], top);
  } catch (err) {
    throw new Error(`task ${task.id}: cannot make a worktree of ${top}${task.ref ? ` at ${task.ref}` : ''}: ${(err as Error).message}`);
  }
  // A worktree shares its repository's config: no identity is written there (the user's repository stays as it was).
  const relative = path.relative(top, source);
  return {
    dir: relative && !relative.startsWith('..') ? path.join(dir, relative) : dir,
    base: (await git(['rev-parse', 'HEAD'], dir)).trim(),
    async remove() {
      await git(['worktree', 'remove', '--force', dir], top).catch(() => rmSync(dir, { recursive: true, force: true }));
      await git(['worktree', 'prune'], top).catch(() => undefined);
    },
  };
}

/** Commits made by the run (if any) need an author; the checkout's own config keeps the user's untouched. */
async function identity(dir: string): Promise<void> {
  await git(['config', 'user.name', 'keel fleet'], dir);
  await git(['config', 'user.email', 'fleet@keel.invalid'], dir);
}

/**
 * Everything the run changed since `base`, new files included, as a patch `git apply` takes. Taken through a copy of
 * the checkout's index, so the run's own `git status` and staging are never touched (and only changed files are hashed).
 */
export async function diffOf(checkout: Checkout): Promise<string> {
  const root = (await git(['rev-parse', '--show-toplevel'], checkout.dir)).trim();
  const index = path.resolve(root, (await git(['rev-parse', '--git-path', 'index'], root)).trim());
  const scratch = mkdtempSync(path.join(tmpdir(), 'keel-fleet-index-'));
  const copy = path.join(scratch, 'index');
  try {
    if (existsSync(index)) copyFileSync(index, copy);
    const env = { GIT_INDEX_FILE: copy };
    await git(['add', '-A'], root, undefined, env);
    return await git(['diff', '--cached', '--binary', checkout.base], root, undefined, env);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Puts a predecessor's work in progress back (the task was taken over from a worker that died). */
export async function applyPatch(checkout: Checkout, patch: string): Promise<void> {
  if (!patch.trim()) return;
  const root = (await git(['rev-parse', '--show-toplevel'], checkout.dir)).trim();
  await git(['apply', '--index', '--binary', '-'], root, patch);
}
