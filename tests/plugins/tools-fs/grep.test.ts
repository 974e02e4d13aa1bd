import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { searchJs } from '../../../plugins/tools-fs/grep-js.js';
import { searchRg } from '../../../plugins/tools-fs/grep-rg.js';
import type { GrepQuery } from '../../../plugins/tools-fs/grep-search.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness, textOf, type Harness } from './harness.js';
import { buildTree } from './tree.js';

/** ripgrep is needed for the parity tests; .ci/run installs it, so under CI its absence is a failure, not a skip. */
const rgPath = (() => {
  try {
    return execFileSync('which', ['rg'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();

if (!rgPath && process.env.CI) throw new Error('ripgrep (rg) is not on PATH: the grep parity tests need it (apt-get install ripgrep)');

let ws: Workspace;
let rg: Harness;
let js: Harness;
beforeAll(async () => {
  ws = makeWorkspace({ git: true });
  buildTree(ws);
  rg = await harness([toolsFs({ grep: 'rg' })], { ws });
  js = await harness([toolsFs({ grep: 'js' })], { ws });
});
afterAll(() => ws.cleanup());

const CASES: Array<Record<string, unknown>> = [
  { pattern: 'helper' },
  { pattern: 'helper', output_mode: 'content' },
  { pattern: 'helper', output_mode: 'count' },
  { pattern: 'helper', output_mode: 'content', context: 2 },
  { pattern: 'helper', output_mode: 'content', case_insensitive: true },
  { pattern: 'note', output_mode: 'content', case_insensitive: true },
  { pattern: 'helper', glob: '*.ts', output_mode: 'content' },
  { pattern: 'helper', glob: 'src/**/*.tsx' },
  { pattern: 'helper', path: 'src', output_mode: 'content' },
  { pattern: 'helper', path: 'lib/b.js', output_mode: 'content', context: 1 },
  { pattern: 'const [xyz] =', output_mode: 'content' },
  { pattern: '^export function \\w+\\(', output_mode: 'content' },
  { pattern: 'helper;$|crlf\\(\\) \\{$', output_mode: 'content' },
  { pattern: 'foo\\nba[rz]', multiline: true, output_mode: 'content' },
  { pattern: 'start\\nfoo', multiline: true, output_mode: 'count' },
  { pattern: 'nothing-matches-this' },
];

describe.skipIf(!rgPath)('grep: ripgrep and the JavaScript fallback agree', () => {
  for (const input of CASES) {
    it(`same text for ${JSON.stringify(input)}`, async () => {
      const fromRg = textOf(await rg.run('grep', input));
      const fromJs = textOf(await js.run('grep', input));
      expect(fromJs).toBe(fromRg);
      if (input.pattern !== 'nothing-matches-this') expect(fromRg).not.toBe('No matches found.');
    });
  }

  it('same structured results for every case', async () => {
    for (const input of CASES) {
      const query: GrepQuery = {
        pattern: String(input.pattern),
        target: input.path ? ws.path(String(input.path)) : ws.dir,
        ignoreRoot: ws.dir,
        glob: input.glob as string | undefined,
        ignoreCase: Boolean(input.case_insensitive),
        multiline: Boolean(input.multiline),
        context: Number(input.context ?? 0),
        filesOnly: false,
      };
      const sort = (o: { files: Array<{ abs: string }> }) => o.files.slice().sort((a, b) => a.abs.localeCompare(b.abs));
      expect(sort(await searchJs(query)), JSON.stringify(input)).toEqual(sort(await searchRg(rgPath, query)));
    }
  });
});

describe('grep', () => {
  const backends = () => (rgPath ? [rg, js] : [js]);

  it('respects .gitignore, skips .git and binary files, and includes hidden files', async () => {
    for (const h of backends()) {
      const text = textOf(await h.run('grep', { pattern: 'helper' }));
      expect(text).toContain('.github/workflow.yml');
      expect(text).toContain('src/index.ts');
      for (const gone of ['node_modules', 'debug.log', 'build/out.js', 'src/secret.ts', '.git/HEAD', 'image.bin']) expect(text).not.toContain(gone);
    }
  });

  it('lists files newest first', async () => {
    const text = textOf(await js.run('grep', { pattern: 'helper', glob: '*.{js,ts,md}' }));
    const order = text.split('\n').filter((l) => ['lib/a.js', 'lib/b.js', 'src/util.ts', 'src/index.ts', 'README.md'].includes(l));
    expect(order).toEqual(['README.md', 'src/index.ts', 'src/util.ts', 'lib/b.js', 'lib/a.js']);
  });

  it('prints content with line numbers, and context groups separated by --', async () => {
    const text = textOf(await js.run('grep', { pattern: 'helper', path: 'lib/b.js', output_mode: 'content', context: 1 }));
    expect(text).toBe(['lib/b.js-3-const z = x + y;', 'lib/b.js:4:console.log(helper);', 'lib/b.js-5-const w = 3;', '--', 'lib/b.js-7-const u = 5;', 'lib/b.js:8:helper(u);'].join('\n'));
  });

  it('reports a bad regex and a missing path as errors', async () => {
    for (const h of backends()) {
      const bad = await h.run('grep', { pattern: 'foo(' });
      expect(bad.isError).toBe(true);
      expect(textOf(bad)).toMatch(/^grep: .*(regex|parse)/i);
    }
    const missing = await js.run('grep', { pattern: 'x', path: 'nope' });
    expect(textOf(missing)).toBe('grep: nope does not exist.');
  });

  it('caps long content output with a notice', async () => {
    const many = makeWorkspace();
    try {
      many.write('lots.txt', Array.from({ length: 600 }, (_, i) => `match ${i}`).join('\n'));
      const h = await harness([toolsFs({ grep: 'js' })], { ws: many });
      const text = textOf(await h.run('grep', { pattern: 'match', output_mode: 'content' }));
      expect(text.split('\n')).toHaveLength(401);
      expect(text.split('\n')[400]).toBe('[Showing lines 1-400 of 600. Call grep again with offset=400 to see more, or narrow the search.]');
    } finally {
      many.cleanup();
    }
  });

  it('stops early with a notice when a search collects too much', async () => {
    const flood = makeWorkspace();
    try {
      flood.write('flood.txt', 'hit\n'.repeat(20_050));
      for (const backend of rgPath ? (['rg', 'js'] as const) : (['js'] as const)) {
        const h = await harness([toolsFs({ grep: backend })], { ws: flood });
        const text = textOf(await h.run('grep', { pattern: 'hit', output_mode: 'count' }));
        expect(text, backend).toContain('[The search stopped early: too many matches.');
      }
    } finally {
      flood.cleanup();
    }
  });

  it('reports a ripgrep that cannot run, and a missing rg when rg is required', async () => {
    const query: GrepQuery = { pattern: 'x', target: ws.dir, ignoreRoot: ws.dir, ignoreCase: false, multiline: false, context: 0, filesOnly: true };
    await expect(searchRg('/nonexistent/rg', query)).rejects.toThrow('could not run ripgrep: spawn /nonexistent/rg ENOENT');
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const h = await harness([toolsFs({ grep: 'rg' })], { ws });
      await expect(h.run('grep', { pattern: 'x' })).rejects.toThrow('tools-fs: option grep is "rg", but ripgrep (rg) is not on PATH');
    } finally {
      process.env.PATH = saved;
    }
  });

  it('pages with offset and head_limit in every output mode, the same with both backends', async () => {
    const paged = makeWorkspace();
    try {
      for (let i = 0; i < 5; i++) paged.write(`f${i}.txt`, Array.from({ length: 3 }, (_, j) => `hit ${i}.${j}`).join('\n'));
      for (const backend of rgPath ? (['rg', 'js'] as const) : (['js'] as const)) {
        const h = await harness([toolsFs({ grep: backend })], { ws: paged });
        const content = textOf(await h.run('grep', { pattern: 'hit', output_mode: 'content', offset: 4, head_limit: 3 }));
        expect(content, backend).toBe(
          ['f1.txt:2:hit 1.1', 'f1.txt:3:hit 1.2', 'f2.txt:1:hit 2.0', '[Showing lines 5-7 of 15. Call grep again with offset=7 to see more, or narrow the search.]'].join('\n'),
        );
        const last = textOf(await h.run('grep', { pattern: 'hit', output_mode: 'content', offset: 13 }));
        expect(last, backend).toBe(['f4.txt:2:hit 4.1', 'f4.txt:3:hit 4.2', '[Showing lines 14-15 of 15.]'].join('\n'));
        const count = textOf(await h.run('grep', { pattern: 'hit', output_mode: 'count', head_limit: 2 }));
        expect(count, backend).toBe(['15 matching lines in 5 files', 'f0.txt:3', 'f1.txt:3', '[Showing files 1-2 of 5. Call grep again with offset=2 to see more, or narrow the search.]'].join('\n'));
        const files = textOf(await h.run('grep', { pattern: 'hit', offset: 4 })).split('\n');
        expect(files, backend).toHaveLength(3);
        expect(files[2], backend).toBe('[Showing files 5-5 of 5.]');
        expect(textOf(await h.run('grep', { pattern: 'hit', offset: 9 })), backend).toBe('5 files\n[offset 9 is past the end: there are 5 files.]');
      }
    } finally {
      paged.cleanup();
    }
  });

  it('skips files over 10 MB in a folder search with both backends; the fallback refuses one named on its own', async () => {
    const big = makeWorkspace();
    try {
      big.write('big.log', `${'x'.repeat(10 * 1024 * 1024)}\nneedle\n`);
      big.write('small.txt', 'needle\n');
      for (const backend of rgPath ? (['rg', 'js'] as const) : (['js'] as const)) {
        const h = await harness([toolsFs({ grep: backend })], { ws: big });
        expect(textOf(await h.run('grep', { pattern: 'needle' })), backend).toBe('1 file\nsmall.txt');
      }
      const js = await harness([toolsFs({ grep: 'js' })], { ws: big });
      const alone = await js.run('grep', { pattern: 'needle', path: 'big.log' });
      expect(alone.isError).toBe(true);
      expect(textOf(alone)).toBe('grep: big.log is 10 MB; without ripgrep, grep searches files up to 10 MB. Search it with bash (grep -n) instead.');
    } finally {
      big.cleanup();
    }
  });

  it('stops the fallback walk at its entry cap and says so', async () => {
    const wide = makeWorkspace();
    try {
      for (let i = 0; i < 30; i++) wide.write(`d${i % 3}/f${i}.txt`, 'needle\n');
      const h = await harness([toolsFs({ grep: 'js', walkLimit: 10 })], { ws: wide });
      const text = textOf(await h.run('grep', { pattern: 'needle', output_mode: 'count' }));
      expect(text).toContain('[The search stopped after visiting its cap of folder entries, so files may be missing; narrow it with path or glob.]');
      expect(Number(/in (\d+) files/.exec(text)?.[1])).toBeLessThan(10);
    } finally {
      wide.cleanup();
    }
  });
});
