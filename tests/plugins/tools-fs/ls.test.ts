import { symlinkSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, textOf, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await harness([toolsFs()]);
});
afterEach(() => h.cleanup());

describe('ls', () => {
  it('lists folders first, then files with sizes and links with targets', async () => {
    h.ws.write('b.txt', 'hello');
    h.ws.write('a/inner.txt', '');
    h.ws.write('z/x.txt', '');
    h.ws.write('big.bin', 'x'.repeat(2048));
    symlinkSync('b.txt', h.ws.path('link'));
    const text = textOf(await h.run('ls', {}));
    expect(text).toBe(['.: 2 folders, 3 files', 'a/', 'z/', 'b.txt  5 B', 'big.bin  2.0 KB', 'link -> b.txt'].join('\n'));
  });

  it('leaves out ignore patterns', async () => {
    h.ws.write('keep.ts', '');
    h.ws.write('drop.log', '');
    h.ws.write('node_modules/x', '');
    const text = textOf(await h.run('ls', { path: '.', ignore: ['*.log', 'node_modules'] }));
    expect(text).toBe('.: 0 folders, 1 files (2 left out by ignore)\nkeep.ts  0 B');
  });

  it('reports missing folders and files', async () => {
    h.ws.write('f.txt', '');
    expect(textOf(await h.run('ls', { path: 'nope' }))).toBe('ls: nope does not exist.');
    const file = await h.run('ls', { path: 'f.txt' });
    expect(file.isError).toBe(true);
    expect(textOf(file)).toBe('ls: f.txt is not a folder.');
  });

  it('caps long listings with a notice', async () => {
    for (let i = 0; i < 510; i++) h.ws.write(`f${String(i).padStart(3, '0')}.txt`, '');
    const text = textOf(await h.run('ls', {}));
    expect(text.split('\n')).toHaveLength(502);
    expect(text).toContain('.: 0 folders, 510 files');
    expect(text.endsWith('[10 more entries not shown; use glob to narrow down.]')).toBe(true);
  });

  it('shows the first 500 in order from a folder of thousands, folders first', async () => {
    for (let i = 2499; i >= 0; i--) h.ws.write(`f${String(i).padStart(4, '0')}.txt`, '');
    h.ws.write('zdir/x', '');
    const lines = textOf(await h.run('ls', {})).split('\n');
    expect(lines[0]).toBe('.: 1 folders, 2500 files');
    expect(lines[1]).toBe('zdir/');
    expect(lines.slice(2, 501)).toEqual(Array.from({ length: 499 }, (_, i) => `f${String(i).padStart(4, '0')}.txt  0 B`));
    expect(lines[501]).toBe('[2001 more entries not shown; use glob to narrow down.]');
  });

  it('stops reading a folder past the walk limit and says the listing is partial', async () => {
    const capped = await harness([toolsFs({ walkLimit: 100 })]);
    try {
      for (let i = 0; i < 150; i++) capped.ws.write(`f${i}.txt`, '');
      const text = textOf(await capped.run('ls', {}));
      const lines = text.split('\n');
      expect(lines[0]).toBe('.: more than 100 entries; stopped reading after 100 (0 folders, 100 files among them)');
      expect(lines).toHaveLength(102);
      expect(lines.at(-1)).toBe(
        '[Only the first 100 entries the folder returned were read, so this is not the whole folder in order; use glob with a pattern to find what you need.]',
      );
    } finally {
      capped.cleanup();
    }
  });
});
