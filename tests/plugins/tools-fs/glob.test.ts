import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, textOf, type Harness } from './harness.js';
import { buildTree } from './tree.js';

let h: Harness;
beforeEach(async () => {
  h = await harness([toolsFs()], { git: true });
  buildTree(h.ws);
});
afterEach(() => h.cleanup());

const lines = (text: string) => text.split('\n');

describe('glob', () => {
  it('respects .gitignore (nested rules and negation) and skips .git', async () => {
    const all = lines(textOf(await h.run('glob', { pattern: '**/*' })));
    expect(all).toContain('src/index.ts');
    expect(all).toContain('.github/workflow.yml');
    expect(all).toContain('.gitignore');
    for (const gone of ['node_modules/pkg/index.js', 'debug.log', 'build/out.js', 'src/secret.ts', '.git/HEAD']) expect(all).not.toContain(gone);
  });

  it('lists newest first', async () => {
    const text = textOf(await h.run('glob', { pattern: '**/*.{ts,js,md}' }));
    const order = lines(text).filter((l) => ['lib/a.js', 'lib/b.js', 'src/util.ts', 'src/index.ts', 'README.md'].includes(l));
    expect(order).toEqual(['README.md', 'src/index.ts', 'src/util.ts', 'lib/b.js', 'lib/a.js']);
  });

  it('searches under a path and accepts absolute patterns', async () => {
    expect(lines(textOf(await h.run('glob', { pattern: '**/*.tsx', path: 'src' })))).toEqual(['src/deep/nested/thing.tsx']);
    expect(lines(textOf(await h.run('glob', { pattern: `${h.ws.dir}/lib/*.js` }))).sort()).toEqual(['lib/a.js', 'lib/b.js']);
    expect(textOf(await h.run('glob', { pattern: '*.md', path: 'lib' }))).toBe('No files match *.md in lib.');
  });

  it('caps results with a notice', async () => {
    for (let i = 0; i < 230; i++) h.ws.write(`many/f${i}.txt`, '');
    const text = textOf(await h.run('glob', { pattern: 'many/*.txt' }));
    expect(lines(text)).toHaveLength(201);
    expect(text).toContain('[30 more files not shown; narrow the pattern or the path.]');
  });

  it('reports a path that is not a folder', async () => {
    const result = await h.run('glob', { pattern: '*', path: 'src/index.ts' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('glob: src/index.ts is not a folder.');
  });

  it('applies .gitignore without a git repository too', async () => {
    const plain = await harness([toolsFs()]);
    try {
      plain.ws.write('.gitignore', 'dist/\n');
      plain.ws.write('dist/x.js', '');
      plain.ws.write('src/y.js', '');
      expect(textOf(await plain.run('glob', { pattern: '**/*.js' }))).toBe('src/y.js');
    } finally {
      plain.cleanup();
    }
  });

  it('stops walking a huge tree at the entry cap and says the list may be incomplete', async () => {
    const capped = await harness([toolsFs({ walkLimit: 20 })]);
    try {
      for (let i = 0; i < 40; i++) capped.ws.write(`d${i % 4}/f${i}.txt`, '');
      const text = textOf(await capped.run('glob', { pattern: '**/*.txt' }));
      const listed = lines(text).filter((l) => l.endsWith('.txt'));
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.length).toBeLessThan(20);
      expect(lines(text).at(-1)).toBe('[The search stopped after visiting 20 entries, so files may be missing; narrow the path or the pattern.]');
      const none = textOf(await capped.run('glob', { pattern: '**/*.md' }));
      expect(none).toBe('No files match **/*.md in ..\n[The search stopped after visiting 20 entries, so files may be missing; narrow the path or the pattern.]');
    } finally {
      capped.cleanup();
    }
  });
});
