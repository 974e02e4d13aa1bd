/**
 * One bash attack through the built CLI: a hostile world, optional rules (a `--config` file in the project),
 * a scripted model that makes the call, and what came of it.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { callTool, resultText, say, type Hostile, type Verdict } from '../../helpers/adversary.js';
import type { ScriptStep } from '../../helpers/anthropic-server.js';

export interface Attack {
  /** What the test is called. */
  name: string;
  /** The command, built from the world's paths. */
  command: (h: Hostile) => string;
  workdir?: (h: Hostile) => string;
  mode: 'auto' | 'edits' | 'ask';
  allow?: string[];
  deny?: string[];
  /** Extra files and state the attack needs (a git repository, a tarball), before the world is snapshotted. */
  setup?: (h: Hostile) => void;
  /** Turn the sandbox on: for spellings that would hurt the machine if the guard ever let them through. */
  sandbox?: boolean;
}

export interface Outcome {
  verdict: Verdict;
  text: string;
  isError: boolean;
}

export async function runAttack(hostile: (script?: ScriptStep[]) => Promise<Hostile>, attack: Attack): Promise<Outcome> {
  // The command needs the world's paths, so the scripted call is built once the world exists.
  const input: Record<string, string> = {};
  const h = await hostile([() => callTool('bash', input, 'attack'), say('done')]);
  input.command = attack.command(h);
  if (attack.workdir) input.workdir = attack.workdir(h);
  attack.setup?.(h);
  const args = ['-p', 'go', '--permission-mode', attack.mode];
  if (attack.allow || attack.deny || attack.sandbox) {
    const config = { permissions: { allow: attack.allow ?? [], ask: [], deny: attack.deny ?? [] }, ...(attack.sandbox ? { sandbox: { enabled: true } } : {}) };
    h.write('keel-rules.json', JSON.stringify(config));
    args.push('--config', 'keel-rules.json');
  }
  const run = await h.run(args, { timeoutMs: 60_000 });
  expect(run.stderr).not.toMatch(/invalid|error:/i);
  expect(run.code).toBe(0);
  const verdict = h.verdict();
  const result = verdict.results.attack;
  expect(result, 'the attack call got a result').toBeDefined();
  return { verdict, text: resultText(result), isError: result?.is_error === true };
}

/** The attack was refused before it ran: nothing changed, no code ran, no secret reached the model. */
export function expectRefused(outcome: Outcome, reason: RegExp = /needs the user's approval|Permission denied/): void {
  expect(outcome.isError, outcome.text).toBe(true);
  expect(outcome.text).toMatch(reason);
  expect(outcome.verdict.changed).toEqual([]);
  expect(outcome.verdict.ran).toBe(false);
  expect(outcome.verdict.leaked).toEqual([]);
}

const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };

/** Makes the project a real repository with one commit and an uncommitted change, so git commands work. */
export function realRepo(h: Hostile): void {
  const env = { ...process.env, ...GIT_ENV, HOME: h.home };
  execFileSync('git', ['init', '-q'], { cwd: h.dir, env });
  execFileSync('git', ['add', 'README.md'], { cwd: h.dir, env });
  execFileSync('git', ['commit', '-qm', 'init'], { cwd: h.dir, env });
  // Rewriting README.md re-snapshots the world after git's own changes.
  h.write('README.md', '# victim project\nchanged\n');
}

/** A tarball in the project holding `name` with a line that would prove code ran. */
export function evilTar(h: Hostile, name: string): void {
  const staging = path.join(h.dir, 'staging');
  h.write(path.join('staging', name), `touch ${h.pwned}\n`);
  execFileSync('tar', ['-cf', path.join(h.dir, 'evil.tar'), '-C', staging, name]);
  h.write('note.txt', 'tarball ready\n');
}

/** A file outside the project (re-snapshotted: it is part of the world, not of the attack). */
export function outsideFile(h: Hostile, name: string, content: string): string {
  const file = path.join(h.outside, name);
  writeFileSync(file, content);
  h.write('note.txt', `placed ${name}\n`);
  return file;
}
