/** Edits never rewrite bytes they did not name: undecodable text, UTF-16 big-endian, huge files, huge rewrites. */
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, textOf, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await harness([toolsFs()]);
});
afterEach(() => h.cleanup());

const bytes = (rel: string) => readFileSync(h.ws.path(rel));
const utf16be = (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);

describe('edit_file on text it cannot write back byte for byte', () => {
  it('refuses a Latin-1 file, a cut UTF-8 sequence and half a UTF-16 pair, and leaves each file as it was', async () => {
    const latin1 = Buffer.from('caf\xe9 = 1\nname = "Andr\xe9"\n', 'latin1');
    writeFileSync(h.ws.path('latin1.txt'), latin1);
    const cut = Buffer.concat([Buffer.from('key = 1\n'), Buffer.from('€', 'utf8').subarray(0, 2), Buffer.from('\n')]);
    writeFileSync(h.ws.path('cut.txt'), cut);
    const odd = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('key = 1\n', 'utf16le'), Buffer.from([0x41])]);
    writeFileSync(h.ws.path('odd.txt'), odd);
    for (const [name, original, kind] of [['latin1.txt', latin1, 'UTF-8'], ['cut.txt', cut, 'UTF-8'], ['odd.txt', odd, 'UTF-16']] as const) {
      const result = await h.run('edit_file', { path: name, old_string: 'key = 1', new_string: 'key = 2' }).catch((err: Error) => ({ isError: true, content: `threw ${err.message}` }));
      if (name === 'latin1.txt') expect(textOf(await h.run('edit_file', { path: name, old_string: 'caf', new_string: 'bar' }))).toContain(`edit_file: ${name} was left as it is: it is not valid ${kind} text`);
      expect(result.isError, name).toBe(true);
      expect(textOf(result as never)).toMatch(new RegExp(`^edit_file: ${name.replace('.', '\\.')} was left as it is: it is not valid ${kind} text .*Change it with bash`));
      expect(bytes(name).equals(original), name).toBe(true);
    }
  });

  it('still edits a valid UTF-8 file with multi-byte characters, a NUL past the first 8 KB and no final newline', async () => {
    const text = `${'é€😀 '.repeat(3000)}\u0000tail = 1`;
    writeFileSync(h.ws.path('multi.txt'), text);
    const result = await h.run('edit_file', { path: 'multi.txt', old_string: 'tail = 1', new_string: 'tail = 2' });
    expect(result.isError).toBeFalsy();
    expect(bytes('multi.txt').equals(Buffer.from(text.replace('tail = 1', 'tail = 2')))).toBe(true);
  });
});

describe('UTF-16 big-endian with a BOM', () => {
  it('is decoded by read_file and kept big-endian, BOM first, by edit_file and write_file', async () => {
    writeFileSync(h.ws.path('be.txt'), utf16be('héllo\nwörld\n'));
    const shown = await h.run('read_file', { path: 'be.txt' });
    expect(textOf(shown)).toBe('     1\théllo\n     2\twörld');
    const edited = await h.run('edit_file', { path: 'be.txt', old_string: 'wörld', new_string: 'wörld ✓' });
    expect(edited.isError).toBeFalsy();
    expect(bytes('be.txt').equals(utf16be('héllo\nwörld ✓\n'))).toBe(true);
    const written = await h.run('write_file', { path: 'be.txt', content: 'ünïcode\n' });
    expect(written.isError).toBeFalsy();
    expect(bytes('be.txt').equals(utf16be('ünïcode\n'))).toBe(true);
  });
});

describe('files too large to read whole', () => {
  it('edit_file refuses a file over 32 MB without reading it, and leaves it as it was', async () => {
    writeFileSync(h.ws.path('huge.log'), 'first line\n');
    truncateSync(h.ws.path('huge.log'), 40 * 1024 * 1024); // sparse: 40 MB that cost no disk
    const result = await h.run('edit_file', { path: 'huge.log', old_string: 'first line', new_string: 'changed' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('edit_file: huge.log is 40.0 MB, larger than the 32.0 MB edit_file changes; use bash (sed -i) for it.');
    expect(bytes('huge.log').subarray(0, 11).toString()).toBe('first line\n');
  });

  it('write_file refuses to overwrite a file over 32 MB it never read, and overwrites one it wrote itself', async () => {
    writeFileSync(h.ws.path('huge.log'), '');
    truncateSync(h.ws.path('huge.log'), 40 * 1024 * 1024);
    const refused = await h.run('write_file', { path: 'huge.log', content: 'small\n' });
    expect(textOf(refused)).toBe('write_file refused: huge.log already exists and this session has not read it. Read it with read_file first, or change it with edit_file.');
    expect(bytes('huge.log').length).toBe(40 * 1024 * 1024);
    const big = 'x'.repeat(33 * 1024 * 1024);
    expect((await h.run('write_file', { path: 'mine.txt', content: big })).isError).toBeFalsy();
    const again = await h.run('write_file', { path: 'mine.txt', content: 'now small\n' });
    expect(textOf(again)).toBe('Overwrote mine.txt (1 line).');
    expect(bytes('mine.txt').toString()).toBe('now small\n');
  });
});

describe('a rewrite too different to diff line by line', () => {
  it('returns at once with one whole-file hunk instead of searching for the smallest diff', async () => {
    const lines = (tag: string) => Array.from({ length: 20_000 }, (_, i) => `${tag} ${i} ${(i * 7919) % 10007}`).join('\n') + '\n';
    h.ws.write('big.txt', lines('old'));
    await h.run('read_file', { path: 'big.txt' });
    const result = await h.run('write_file', { path: 'big.txt', content: lines('new') });
    expect(result.isError).toBeFalsy();
    const display = result.display as { diff: string; linesAdded: number; linesRemoved: number };
    expect(display.linesAdded).toBe(20_000);
    expect(display.linesRemoved).toBe(20_000);
    expect(display.diff.split('\n').slice(0, 4)).toEqual(['--- big.txt', '+++ big.txt', '@@ -1,20000 +1,20000 @@', '-old 0 0']);
    expect(bytes('big.txt').toString()).toBe(lines('new'));
  });

  it('still shows a minimal diff for a small change in a large file', async () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join('\n') + '\n';
    h.ws.write('big.txt', text);
    const result = await h.run('edit_file', { path: 'big.txt', old_string: 'line 10000\n', new_string: 'line ten thousand\n' });
    const display = result.display as { diff: string; linesAdded: number; linesRemoved: number };
    expect(display).toMatchObject({ linesAdded: 1, linesRemoved: 1 });
    expect(display.diff).toContain('@@ -9998,7 +9998,7 @@');
  });
});
