import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { truncateSync, writeFileSync } from 'node:fs';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, textOf, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await harness([toolsFs()]);
});
afterEach(() => h.cleanup());

describe('read_file', () => {
  it('numbers lines and pages a 10 000-line file 2000 lines at a time', async () => {
    h.ws.write('big.txt', Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    const first = await h.run('read_file', { path: 'big.txt' });
    const text = textOf(first);
    expect(first.isError).toBeFalsy();
    expect(text).toContain('     1\tline 1\n');
    expect(text).toContain('  2000\tline 2000\n');
    expect(text).not.toContain('line 2001');
    expect(text).toContain('[Lines 1-2000 of 10000. 8000 more lines not shown: call read_file with offset=2001 to read on.]');

    const last = textOf(await h.run('read_file', { path: 'big.txt', offset: 9001 }));
    expect(last).toContain(' 9001\tline 9001');
    expect(last).toContain('10000\tline 10000');
    expect(last).toContain('[Lines 9001-10000 of 10000.]');

    const window = textOf(await h.run('read_file', { path: 'big.txt', offset: 5000, limit: 3 }));
    expect(window.split('\n').filter((l) => /^\s*\d+\t/.test(l))).toEqual(['  5000\tline 5000', '  5001\tline 5001', '  5002\tline 5002']);
  });

  it('cuts very long lines', async () => {
    h.ws.write('long.txt', 'x'.repeat(5000));
    const text = textOf(await h.run('read_file', { path: 'long.txt' }));
    expect(text).toContain('… [line cut: 5000 chars]');
    expect(text.length).toBeLessThan(2100);
  });

  it('refuses binary files with a message', async () => {
    h.ws.write('blob.dat', Buffer.from([1, 2, 0, 3, 4]).toString('latin1'));
    const result = await h.run('read_file', { path: 'blob.dat' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/blob\.dat is a binary file/);
  });

  it('returns images as image blocks', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    writeFileSync(h.ws.path('dot.png'), png);
    const result = await h.run('read_file', { path: 'dot.png' });
    expect(Array.isArray(result.content)).toBe(true);
    const blocks = result.content as Array<{ type: string; source?: { media_type: string; data: string } }>;
    expect(blocks[1]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } });
  });

  it('suggests near names for a missing file', async () => {
    h.ws.write('src/config.ts', 'x');
    const result = await h.run('read_file', { path: 'src/confg.ts' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('File not found: src/confg.ts. Did you mean src/config.ts?');
    const other = await h.run('read_file', { path: 'src/config.js' });
    expect(textOf(other)).toContain('Did you mean src/config.ts?');
    const deep = await h.run('read_file', { path: 'nope/deeper/file.ts' });
    expect(textOf(deep)).toContain('the deepest existing folder is .');
  });

  it('reports an offset past the end, a directory and an empty file', async () => {
    h.ws.write('three.txt', 'a\nb\nc\n');
    h.ws.write('empty.txt', '');
    expect(textOf(await h.run('read_file', { path: 'three.txt', offset: 9 }))).toContain('has only 3 lines; offset 9 is past the end');
    expect(textOf(await h.run('read_file', { path: '.' }))).toContain('is a directory; use ls');
    expect(textOf(await h.run('read_file', { path: 'empty.txt' }))).toBe('empty.txt is empty.');
  });

  it('shows CRLF files without carriage returns and decodes UTF-16 with a BOM', async () => {
    h.ws.write('crlf.txt', 'one\r\ntwo\r\n');
    expect(textOf(await h.run('read_file', { path: 'crlf.txt' }))).toBe('     1\tone\n     2\ttwo');
    writeFileSync(h.ws.path('u16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo\n', 'utf16le')]));
    expect(textOf(await h.run('read_file', { path: 'u16.txt' }))).toBe('     1\théllo');
  });

  it('refuses text files over 32 MB and images over 3.75 MB', async () => {
    // Sparse files: the size is what counts, and nothing is read.
    truncateSync(h.ws.write('huge.log', ''), 33 * 1024 * 1024);
    truncateSync(h.ws.write('huge.png', ''), 4 * 1024 * 1024);
    const text = await h.run('read_file', { path: 'huge.log' });
    expect(text.isError).toBe(true);
    expect(textOf(text)).toBe("huge.log is 33.0 MB, too large to read; search it with grep or print parts with bash (sed -n '100,200p').");
    expect(textOf(await h.run('read_file', { path: 'huge.png' }))).toBe('huge.png is an image of 4.0 MB, larger than the 3.8 MB the model accepts.');
  });
});

