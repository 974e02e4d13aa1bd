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
});
