/**
 * `/review [PR number]`: the current diff (or a pull request's, through `gh`) handed to the model with a
 * review prompt. git runs with external diff drivers, textconv filters and fsmonitor off, so a repository's
 * own config cannot make the review run its commands.
 */
import { execFile } from 'node:child_process';

const MAX_DIFF = 200_000;
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  missing?: boolean;
}

function run(file: string, args: string[], cwd: string, signal?: AbortSignal): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, signal, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', GIT_PAGER: 'cat', PAGER: 'cat', NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr), missing: (err as NodeJS.ErrnoException | null)?.code === 'ENOENT' });
      },
    );
  });
}

const SAFE_GIT = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'diff.external=', '--no-pager'];
const git = (args: string[], cwd: string, signal?: AbortSignal) => run('git', [...SAFE_GIT, ...args], cwd, signal);

export interface ReviewSubject {
  title: string;
  diff: string;
  untracked: string[];
  truncated: boolean;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

/** The working tree's changes against HEAD (staged and not), and the files git does not track yet. */
export async function localChanges(cwd: string, signal?: AbortSignal): Promise<ReviewSubject> {
  const inside = await git(['rev-parse', '--is-inside-work-tree'], cwd, signal);
  if (inside.missing) throw new Error('git is not installed; /review needs it');
  if (inside.code !== 0 || inside.stdout.trim() !== 'true') throw new Error(`${cwd} is not in a git work tree; /review reviews git changes (or name a PR number)`);
  // Clean filters (.gitattributes `filter=`) run while git diff reads the work tree: every configured one is
  // switched off for this diff (reading config runs nothing).
  const filters = await git(['config', '--get-regexp', '^filter\\.'], cwd, signal);
  const drivers = new Set(filters.stdout.split('\n').map((l) => /^filter\.(.+)\.[^.\s]+\s/.exec(l)?.[1]).filter((d): d is string => Boolean(d)));
  const noFilters = [...drivers].flatMap((d) => ['-c', `filter.${d}.clean=`, '-c', `filter.${d}.smudge=`, '-c', `filter.${d}.process=`, '-c', `filter.${d}.required=false`]);
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD'], cwd, signal);
  const base = head.code === 0 ? 'HEAD' : EMPTY_TREE;
  const diff = await git([...noFilters, 'diff', '--no-ext-diff', '--no-textconv', '--no-color', base], cwd, signal);
  if (diff.code !== 0) throw new Error(`git diff failed: ${firstLine(diff.stderr)}`);
  const others = await git(['ls-files', '--others', '--exclude-standard', '-z'], cwd, signal);
  const untracked = others.code === 0 ? others.stdout.split('\0').filter(Boolean) : [];
  if (!diff.stdout.trim() && untracked.length === 0) throw new Error('nothing to review: the work tree has no changes against HEAD (name a PR number to review one)');
  return { title: `the uncommitted changes in ${cwd}`, ...cap(diff.stdout), untracked };
}

/** A pull request's description and diff, from the GitHub CLI. */
export async function pullRequest(number: string, cwd: string, signal?: AbortSignal): Promise<ReviewSubject> {
  const view = await run('gh', ['pr', 'view', number, '--json', 'title,body,baseRefName,headRefName'], cwd, signal);
  if (view.missing) throw new Error('the GitHub CLI (gh) is not installed; install it and run gh auth login to review pull requests');
  if (view.code !== 0) throw new Error(`gh pr view ${number} failed: ${firstLine(view.stderr)}`);
  let meta: { title?: string; body?: string; baseRefName?: string; headRefName?: string } = {};
  try {
    meta = JSON.parse(view.stdout) as typeof meta;
  } catch {
    throw new Error(`gh pr view ${number} did not print JSON`);
  }
  const diff = await run('gh', ['pr', 'diff', number, '--color', 'never'], cwd, signal);
  if (diff.code !== 0) throw new Error(`gh pr diff ${number} failed: ${firstLine(diff.stderr)}`);
  const description = meta.body?.trim() ? `\n\nIts description:\n${meta.body.trim()}` : '';
  return { title: `pull request #${number} "${meta.title ?? ''}" (${meta.headRefName ?? '?'} into ${meta.baseRefName ?? '?'})${description}`, ...cap(diff.stdout), untracked: [] };
}

function cap(diff: string): { diff: string; truncated: boolean } {
  return diff.length > MAX_DIFF ? { diff: diff.slice(0, MAX_DIFF), truncated: true } : { diff, truncated: false };
}

export function reviewPrompt(subject: ReviewSubject, extra: string): string {
  const longest = Math.max(2, ...[...subject.diff.matchAll(/`+/g)].map((m) => m[0].length));
  const bar = '`'.repeat(longest + 1);
  return [
    `Review ${subject.title}.`,
    '',
    'Act as a careful senior reviewer. Read the surrounding code with the file tools where the diff alone does not tell you enough, but do not change any file.',
    'Report, in this order:',
    '1. A two or three sentence summary of what the change does.',
    '2. Findings, most severe first: bugs and wrong behaviour, security problems, data loss, race conditions, missing error handling, behaviour changed without a test, then maintainability. For each: file and line, what is wrong, why it matters, and a concrete fix.',
    '3. Anything the author should test by hand.',
    'Say plainly when you find nothing serious; do not pad the review with style nits.',
    ...(extra ? ['', `The user asks you to focus on: ${extra}`] : []),
    ...(subject.untracked.length ? ['', `New files not yet tracked by git (read them too): ${subject.untracked.join(', ')}`] : []),
    '',
    `The diff${subject.truncated ? ` (cut at ${MAX_DIFF} characters; read the files for the rest)` : ''}:`,
    `${bar}diff`,
    subject.diff.replace(/\n$/, ''),
    bar,
  ].join('\n');
}
