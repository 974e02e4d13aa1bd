/**
 * Class 8: a hard link inside the project is another name for a file that may live anywhere. Writes to a file
 * with more than one link are asked in every mode (and re-checked right before the call runs); reads are asked
 * like reads outside the project, and in auto mode when the other name is a protected secret. Everything Keel
 * writes under $KEEL_HOME is private: files 0600, folders 0700.
 */
import { linkSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, callTools, resultText, say, SECRETS, useHostile, type Hostile } from '../../helpers/adversary.js';

const hostile = useHostile();

const MODES = ['auto', 'edits', 'ask', 'manual'] as const;

/** docs/linked.txt: a hard link to the canary outside the project. */
function linkOutside(h: Hostile): string {
  mkdirSync(h.path('docs'), { recursive: true });
  const link = h.path('docs/linked.txt');
  linkSync(path.join(h.outside, 'secret.txt'), link);
  h.settle();
  return link;
}

describe.each(MODES)('class 8 in %s mode: hard-linked files', (mode) => {
  it('write_file and edit_file through a hard link are asked; the file outside is unchanged', async () => {
    const h = await hostile();
    linkOutside(h);
    h.server.push(
      callTools(
        { name: 'write_file', input: { path: 'docs/linked.txt', content: 'overwritten' }, id: 'w' },
        { name: 'edit_file', input: { path: 'docs/linked.txt', old_string: SECRETS.outside, new_string: 'edited' }, id: 'e' },
      ),
      say('done'),
    );
    const run = await h.run(['-p', 'go', '--permission-mode', mode]);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    for (const id of ['w', 'e']) {
      expect(v.results[id]?.is_error, id).toBe(true);
      expect(resultText(v.results[id]), id).toMatch(/has 2 hard links/);
    }
    expect(v.changed).toEqual([]);
    expect(readFileSync(path.join(h.outside, 'secret.txt'), 'utf8')).toBe(`${SECRETS.outside}\n`);
  });

  it('read_file of a hard link to ~/.ssh/id_rsa is asked and nothing leaks', async () => {
    const h = await hostile([callTool('read_file', { path: 'key.txt' }, 'r'), say('done')]);
    linkSync(path.join(h.home, '.ssh', 'id_rsa'), h.path('key.txt'));
    h.settle();
    const run = await h.run(['-p', 'go', '--permission-mode', mode]);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.r?.is_error).toBe(true);
    expect(resultText(v.results.r)).toMatch(/hard link/);
    expect(v.leaked).toEqual([]);
  });
});

describe('class 8: hard-link reads and the check before the call runs', () => {
  it.each(['edits', 'ask', 'manual'] as const)('%s mode: reading a hard link to a file outside is asked like an outside read', async (mode) => {
    const h = await hostile([callTool('read_file', { path: 'docs/linked.txt' }, 'r'), say('done')]);
    linkOutside(h);
    const run = await h.run(['-p', 'go', '--permission-mode', mode]);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.r?.is_error).toBe(true);
    expect(resultText(v.results.r)).toMatch(/hard links and may be a file outside the project/);
    expect(v.leaked).toEqual([]);
  });

  it('auto mode: a hard link to $KEEL_HOME/auth.json is asked before it is read', async () => {
    const h = await hostile([callTool('grep', { pattern: 'apiKey', path: 'cache.json' }, 'g'), say('done')]);
    linkSync(path.join(h.keelHome, 'auth.json'), h.path('cache.json'));
    h.settle();
    const run = await h.run(['-p', 'go', '--permission-mode', 'auto']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.g?.is_error).toBe(true);
    expect(resultText(v.results.g)).toMatch(/hard link to .*auth\.json, which is protected for reads/);
    expect(v.leaked).toEqual([]);
  });

  it('auto mode: a file that gains a hard link after the check is not written', async () => {
    const h = await hostile([
      callTools(
        { name: 'bash', input: { command: 'mkdir -p docs && ln README.md docs/alias.md' }, id: 'ln' },
        { name: 'write_file', input: { path: 'docs/alias.md', content: 'pwned readme' }, id: 'w' },
      ),
      say('done'),
    ]);
    const run = await h.run(['-p', 'go', '--permission-mode', 'auto']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.ln?.is_error, resultText(v.results.ln)).toBeUndefined();
    expect(v.results.w?.is_error).toBe(true);
    expect(resultText(v.results.w)).toMatch(/gained hard links after it was checked/);
    expect(readFileSync(h.path('README.md'), 'utf8')).toBe('# victim project\n');
  });
});

/** Every file and folder below `root` (not `root` itself), with its permission bits. */
function modes(root: string): Array<[string, number, boolean]> {
  const out: Array<[string, number, boolean]> = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      const st = statSync(p);
      out.push([path.relative(root, p), st.mode & 0o777, st.isDirectory()]);
      if (st.isDirectory()) visit(p);
    }
  };
  visit(root);
  return out;
}

describe('class 8: file modes under $KEEL_HOME', () => {
  it('sessions, saved tool outputs and the trust file are private (files 0600, folders 0700)', async () => {
    const h = await hostile([callTool('bash', { command: 'seq 1 5000' }, 'b'), say('done')]);
    const run = await h.run(['-p', 'go', '--permission-mode', 'auto', '--trust']);
    expect(run.code, run.stderr).toBe(0);
    expect(resultText(h.verdict().results.b)).toMatch(/saved at .*tool-outputs/);
    const trust = await h.run(['trust']);
    expect(trust.code, trust.stderr).toBe(0);
    const found = modes(h.keelHome);
    const names = found.map(([p]) => p);
    expect(names.some((p) => p.startsWith('tool-outputs/') && p.endsWith('.txt'))).toBe(true);
    expect(names.some((p) => p.startsWith('sessions/') && p.endsWith('.jsonl'))).toBe(true);
    expect(names).toContain('trusted-folders.json');
    for (const [p, mode, dir] of found) expect([p, mode.toString(8)]).toEqual([p, dir ? '700' : '600']);
  });
});
