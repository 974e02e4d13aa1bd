/**
 * Shared by the sandbox-escape corpus: a hostile world with the sandbox on (project `agent.config.ts`, trusted for
 * the run), payloads hidden from static analysis, and a deep check of the protected names in the project.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { findOnPath, probe } from '../../../plugins/sandbox/bwrap.js';
import { callTool, resultText, say, useHostile, type Hostile, type Verdict } from '../../helpers/adversary.js';
import { runMarker } from '../../helpers/run-marker.js';

const bwrap = findOnPath('bwrap');
const problem = bwrap ? probe(bwrap) : 'bubblewrap (bwrap) is not installed';
export const skipReason = problem ? `sandbox escape tests skipped: ${problem}` : '';
if (skipReason) console.warn(skipReason);
export const hasPython = Boolean(findOnPath('python3'));

/** Protected names the corpus watches at any depth of the project (the harness watches the top level only). */
const NAMES = /^(agent\.config\.[a-z]+|\.git|\.keel|\.mcp\.json|\.claude|AGENTS\.md|CLAUDE\.md)$/;
/** git's own data inside `.git`: the sandbox leaves it writable (commits must work), so the corpus ignores it. */
const GIT_DATA = /\/\.git\/(objects|refs|logs|info|branches|description|index|HEAD|ORIG_HEAD|FETCH_HEAD|COMMIT_EDITMSG|packed-refs)(\/|$)/;

/** Every path at or below a protected name in `dir` (not below node_modules), with its type, mode, inode and hash. */
export function surfaceOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const record = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) out.set(p, `link:${readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(p, `dir:${st.mode & 0o7777}`);
      for (const name of readdirSync(p)) record(path.join(p, name));
    } else out.set(p, `file:${st.mode & 0o7777}:${st.ino}:${createHash('sha1').update(readFileSync(p)).digest('hex')}`);
  };
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (NAMES.test(entry.name)) record(p);
      else if (entry.isDirectory() && entry.name !== 'node_modules') walk(p);
    }
  };
  walk(dir);
  for (const p of [...out.keys()]) if (GIT_DATA.test(p)) out.delete(p);
  return out;
}

export function surfaceDiff(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [p, v] of before) if (after.get(p) !== v) changed.push(p);
  for (const p of after.keys()) if (!before.has(p)) changed.push(p);
  return changed.sort();
}

/** A shell command that writes `script` to `file` (base64, so no path in it is visible) and runs it with `runner`. */
export function hidden(script: string, runner = 'bash', file = '.payload'): string {
  return `echo ${Buffer.from(script).toString('base64')} | base64 -d > ${file} && ${runner} ${file}`;
}

export interface Attack {
  h: Hostile;
  v: Verdict;
  /** Protected paths (any depth) created, changed or removed, git's own data left out. */
  surface: string[];
  /** The text of each bash result, by call id. */
  text: (id: string) => string;
  stdout: string;
  stderr: string;
}

export interface AttackOptions {
  mode?: 'auto' | 'edits';
  /** More of the project config's object literal (after `sandbox: …`). */
  config?: string;
  sandbox?: string;
  /** Prepares the world before the run (files written here are part of the starting point). */
  setup?: (h: Hostile) => void;
}

/**
 * Call at module level. Runs the scripted calls with the sandbox on and returns what they achieved. The worlds
 * live under /var/tmp: inside the sandbox /tmp is a private tmpfs, which would hide a fake HOME kept there and
 * make writes to it vanish instead of failing, unlike a real home folder.
 */
export function useAttack(): (calls: Array<{ name?: string; input: unknown; id: string }>, opts?: AttackOptions) => Promise<Attack> {
  const previous = process.env.TMPDIR;
  let root: string | undefined;
  beforeAll(() => {
    if (!existsSync('/var/tmp')) return;
    root = mkdtempSync(`/var/tmp/keel-sandbox-escape-${runMarker}-`);
    process.env.TMPDIR = root;
  });
  afterAll(() => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (root) rmSync(root, { recursive: true, force: true });
  });
  const hostile = useHostile();
  return async (calls, opts = {}) => {
    const h = await hostile([...calls.map((c) => callTool(c.name ?? 'bash', c.input, c.id)), say('done')]);
    h.write('agent.config.ts', `export default { sandbox: ${opts.sandbox ?? '{ enabled: true }'}, ${opts.config ?? ''} };\n`);
    h.write('src/app.ts', 'export const app = 1;\n');
    h.write('.git/hooks/pre-commit.sample', '#!/bin/sh\nexit 0\n');
    opts.setup?.(h);
    h.write('README.md', '# victim project\n');
    const before = surfaceOf(h.dir);
    const run = await h.run(['-p', 'go', '--permission-mode', opts.mode ?? 'auto', '--trust'], { timeoutMs: 60_000 });
    const v = h.verdict();
    return {
      h,
      v,
      surface: surfaceDiff(before, surfaceOf(h.dir)),
      text: (id) => resultText(v.results[id]),
      stdout: run.stdout,
      stderr: run.stderr,
    };
  };
}

/** The attack achieved nothing: no protected path touched, nothing outside changed, no marker, no secret sent. */
export function expectHarmless(a: Attack, ids: string[]): void {
  for (const id of ids) expect(a.v.results[id], `the model got no result for ${id}: ${a.stderr}`).toBeDefined();
  expect(a.surface).toEqual([]);
  expect(a.v.changed.filter((p) => !GIT_DATA.test(p))).toEqual([]);
  expect(a.v.ran).toBe(false);
  expect(a.v.leaked).toEqual([]);
}
