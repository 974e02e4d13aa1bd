import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coreProtectedEntries, ProtectedPaths } from '../../../kernel/index.js';
import { compare, revert } from '../../../plugins/sandbox/revert.js';
import { hasFrontMatter, survey } from '../../../plugins/sandbox/survey.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

function world(extra: (s: ProtectedPaths) => void = () => undefined) {
  ws = makeWorkspace();
  const surface = new ProtectedPaths();
  for (const e of coreProtectedEntries({ keelHome: ws.path('keel-home'), home: ws.path('home') })) surface.add(e);
  extra(surface);
  ws.write('.git/config', '[core]\n');
  ws.write('.git/hooks/pre-commit.sample', '#!/bin/sh\n');
  ws.write('.git/objects/ab/cdef', 'blob');
  ws.write('agent.config.ts', 'export default {};\n');
  ws.write('packages/app/src/agent.config.json', '{}\n');
  ws.write('node_modules/pkg/agent.config.js', 'module.exports = {};\n');
  ws.write('.keel/agents/a.md', '# a\n');
  ws.write('.keel/memory/m.md', 'remember\n');
  ws.write('src/index.ts', 'x\n');
  return surface;
}

/** Makes every folder look older than the walk's mtime margin, as it is between two real commands. */
function age(dir: string) {
  const old = new Date(Date.now() - 60_000);
  const visit = (d: string) => {
    utimesSync(d, old, old);
    for (const name of readdirSync(d, { withFileTypes: true })) {
      if (name.isDirectory() && !name.isSymbolicLink()) visit(path.join(d, name.name));
    }
  };
  visit(dir);
}

describe('survey', () => {
  it('finds protected paths at any depth, skips node_modules and git data, and plans the mounts', () => {
    const surface = world();
    const s = survey(surface, ws.dir, [ws.dir]);
    const rel = (list: Iterable<string>) => [...list].map((p) => path.relative(ws.dir, p)).sort();
    expect(rel(s.records.keys())).toEqual([
      '.git', '.git/config', '.git/hooks', '.git/hooks/pre-commit.sample', '.keel', '.keel/agents', '.keel/agents/a.md', 'agent.config.ts', 'packages/app/src/agent.config.json',
    ]);
    expect(rel(s.readOnly)).toEqual(['.git/config', '.git/hooks', '.keel', 'agent.config.ts', 'packages/app/src/agent.config.json']);
    expect(rel(s.pinned)).toEqual(['.git', 'packages', 'packages/app', 'packages/app/src']);
    expect(rel(s.writable)).toEqual(['.keel/memory']);
    expect(s.records.get(ws.path('agent.config.ts'))?.content?.toString()).toBe('export default {};\n');
  });

  it('has no bound a command could hide behind: a name under 3 000 new folders is found', () => {
    const surface = world();
    age(ws.dir);
    const before = survey(surface, ws.dir, [ws.dir]);
    for (let i = 0; i < 3000; i++) mkdirSync(ws.path(`many/d${i}`), { recursive: true });
    ws.write('many/d2999/agent.config.ts', 'x');
    ws.write('many/d0/agent.config.ts', 'x');
    const after = survey(surface, ws.dir, [ws.dir], before);
    expect(compare(before.records, after.records).map((c) => path.relative(ws.dir, c.path))).toEqual(['many/d0/agent.config.ts', 'many/d2999/agent.config.ts']);
  });

  it('the walk after a command re-reads changed folders only, and finds what the full walk finds', () => {
    const surface = world();
    ws.write('a/b/c/keep.txt', 'x');
    age(ws.dir);
    const before = survey(surface, ws.dir, [ws.dir]);
    ws.write('a/b/c/agent.config.mjs', 'x');
    ws.write('new/deep/agent.config.ts', 'x');
    ws.write('agent.config.ts', 'changed');
    const after = survey(surface, ws.dir, [ws.dir], before);
    const full = survey(surface, ws.dir, [ws.dir]);
    expect([...after.records.keys()].sort()).toEqual([...full.records.keys()].sort());
    expect(after.dirs).toBeLessThan(full.dirs + 1);
    expect(compare(before.records, after.records).map((c) => [path.relative(ws.dir, c.path), c.kind])).toEqual([
      ['a/b/c/agent.config.mjs', 'created'],
      ['agent.config.ts', 'changed'],
      ['new/deep/agent.config.ts', 'created'],
    ]);
  });

  it('the walk after a command does not follow a folder swapped for a symlink', () => {
    const surface = world();
    age(ws.dir);
    const before = survey(surface, ws.dir, [ws.dir]);
    renameSync(ws.path('packages'), ws.path('moved'));
    symlinkSync(ws.path('moved'), ws.path('packages'));
    const after = survey(surface, ws.dir, [ws.dir], before);
    expect(after.records.has(ws.path('packages/app/src/agent.config.json'))).toBe(false);
    expect(after.records.has(ws.path('moved/app/src/agent.config.json'))).toBe(true);
  });

  it('a front-matter entry counts a new file only when it has front matter', () => {
    const surface = world((s) => s.add({ segment: /^AGENTS\.md$/, why: 'instructions with settings', frontMatter: true }));
    const before = survey(surface, ws.dir, [ws.dir]);
    ws.write('docs/AGENTS.md', '# just prose\n');
    ws.write('lib/AGENTS.md', '---\nallowed-tools: bash\n---\n# x\n');
    const changes = compare(before.records, survey(surface, ws.dir, [ws.dir]).records);
    expect(changes.map((c) => path.relative(ws.dir, c.path))).toEqual(['lib/AGENTS.md']);
    expect(hasFrontMatter(Buffer.from('\uFEFF---\r\nx: 1\r\n---\r\n'))).toBe(true);
    expect(hasFrontMatter(Buffer.from('# --- not front matter\n'))).toBe(false);
  });

  it('protected path entries inside a writable folder (a shell profile under an allowWrite home) are recorded and read-only', () => {
    const surface = world();
    ws.write('home/.bashrc', '# rc\n');
    ws.write('home/notes.txt', 'x');
    const s = survey(surface, ws.dir, [ws.dir, ws.path('home')]);
    expect(s.readOnly).toContain(ws.path('home/.bashrc'));
    expect(s.records.has(ws.path('home/notes.txt'))).toBe(false);
  });
});

describe('revert', () => {
  it('removes what was created and restores what was changed, replaced or removed, cutting hard links', () => {
    const surface = world();
    linkSync(ws.path('agent.config.ts'), ws.path('link.ts'));
    const before = survey(surface, ws.dir, [ws.dir]);
    writeFileSync(ws.path('link.ts'), 'pwned');
    rmSync(ws.path('packages/app/src/agent.config.json'));
    mkdirSync(ws.path('packages/app/src/agent.config.json'));
    rmSync(ws.path('.keel/agents'), { recursive: true });
    ws.write('x/agent.config.mjs', 'evil');
    const changes = compare(before.records, survey(surface, ws.dir, [ws.dir]).records);
    const { lines, failed } = revert(changes, before.records, [ws.dir]);
    expect(failed).toEqual([]);
    expect(lines).toEqual([
      `${ws.path('x/agent.config.mjs')}: created by the command, removed (a Keel config file (it runs as code))`,
      expect.stringContaining(`${ws.path('.keel/agents')}: removed or moved away by the command, restored`),
      expect.stringContaining(`${ws.path('agent.config.ts')}: changed by the command, restored`),
      expect.stringContaining(`${ws.path('.keel/agents/a.md')}: removed or moved away by the command, restored`),
      expect.stringContaining(`${ws.path('packages/app/src/agent.config.json')}: replaced by the command, restored`),
    ]);
    expect(readFileSync(ws.path('agent.config.ts'), 'utf8')).toBe('export default {};\n');
    expect(statSync(ws.path('agent.config.ts')).nlink).toBe(1);
    expect(readFileSync(ws.path('link.ts'), 'utf8')).toBe('pwned');
    expect(readFileSync(ws.path('packages/app/src/agent.config.json'), 'utf8')).toBe('{}\n');
    expect(readFileSync(ws.path('.keel/agents/a.md'), 'utf8')).toBe('# a\n');
    expect(existsSync(ws.path('x/agent.config.mjs'))).toBe(false);
    expect(compare(before.records, survey(surface, ws.dir, [ws.dir]).records).filter((c) => c.kind !== 'replaced')).toEqual([]);
  });

  it('a parent swapped for a symlink is removed and made again: nothing is written through the link', () => {
    const surface = world();
    const outside = makeWorkspace();
    try {
      const before = survey(surface, ws.dir, [ws.dir]);
      renameSync(ws.path('packages/app'), ws.path('app-moved'));
      symlinkSync(outside.dir, ws.path('packages/app'));
      const changes = compare(before.records, survey(surface, ws.dir, [ws.dir]).records);
      const { lines } = revert(changes, before.records, [ws.dir]);
      expect(lines).toContain(`${ws.path('packages/app')}: a symlink stood where a folder holding protected paths was; removed`);
      expect(lstatSync(ws.path('packages/app')).isDirectory()).toBe(true);
      expect(readFileSync(ws.path('packages/app/src/agent.config.json'), 'utf8')).toBe('{}\n');
      expect(existsSync(path.join(outside.dir, 'src'))).toBe(false);
    } finally {
      outside.cleanup();
    }
  });

  it('says what it could not restore: a file too large to keep a copy of', () => {
    const surface = world();
    const before = survey(surface, ws.dir, [ws.dir]);
    const rec = before.records.get(ws.path('agent.config.ts'))!;
    delete rec.content;
    writeFileSync(ws.path('agent.config.ts'), 'changed and longer');
    const { lines, failed } = revert(compare(before.records, survey(surface, ws.dir, [ws.dir]).records), before.records, [ws.dir]);
    expect(lines).toEqual([]);
    expect(failed).toEqual([`${ws.path('agent.config.ts')}: too large to keep a copy of; restore it yourself`]);
  });
});
