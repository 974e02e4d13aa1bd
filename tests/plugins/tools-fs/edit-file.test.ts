import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, textOf, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await harness([toolsFs()]);
});
afterEach(() => h.cleanup());

const read = (rel: string) => readFileSync(h.ws.path(rel), 'utf8');

describe('edit_file', () => {
  it('replaces a unique match and returns a unified diff', async () => {
    h.ws.write('a.ts', 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
    const result = await h.run('edit_file', { path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = 20;' });
    expect(result.isError).toBeFalsy();
    expect(read('a.ts')).toBe('const a = 1;\nconst b = 20;\nconst c = 3;\n');
    const text = textOf(result);
    expect(text).toContain('Edited a.ts (1 replacement).');
    expect(text).toContain('--- a.ts\n+++ a.ts\n@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 20;\n const c = 3;');
    expect(result.display?.diff).toContain('+const b = 20;');
    expect(result.display).toMatchObject({ linesAdded: 1, linesRemoved: 1 });
  });

  it('says in its display how many lines each file tool added and removed (status lines and telemetry read them)', async () => {
    const created = await h.run('write_file', { path: 'n.txt', content: 'a\nb\nc\n' });
    expect(created.display).toMatchObject({ created: true, linesAdded: 3, linesRemoved: 0 });
    expect((await h.run('write_file', { path: 'e.txt', content: '' })).display).toMatchObject({ linesAdded: 0, linesRemoved: 0 });
    const overwritten = await h.run('write_file', { path: 'n.txt', content: 'a\nB\n' });
    expect(overwritten.display).toMatchObject({ linesAdded: 1, linesRemoved: 2 });
    const made = await h.run('edit_file', { path: 'm.txt', old_string: '', new_string: 'one\ntwo\n' });
    expect(made.display).toMatchObject({ created: true, linesAdded: 2, linesRemoved: 0 });
    // Lines that start with "++" or "--" are lines too: only the diff's own file headers are not counted.
    await h.run('write_file', { path: 'm.txt', content: '-- old\nkeep\n' });
    const marks = await h.run('edit_file', { path: 'm.txt', old_string: '-- old', new_string: '++ new' });
    expect(marks.display).toMatchObject({ linesAdded: 1, linesRemoved: 1 });
  });

  it('says when old_string matched zero times', async () => {
    h.ws.write('a.ts', 'hello\n');
    const result = await h.run('edit_file', { path: 'a.ts', old_string: 'goodbye', new_string: 'x' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('old_string matched 0 times in a.ts');
    expect(read('a.ts')).toBe('hello\n');
  });

  it('hints at whitespace and at line-number prefixes', async () => {
    h.ws.write('a.ts', 'if (x) {\n\treturn 1;\n}\n');
    const ws = await h.run('edit_file', { path: 'a.ts', old_string: 'if (x) {\n    return 1;', new_string: 'y' });
    expect(textOf(ws)).toContain('A match exists if whitespace is ignored');
    const numbered = await h.run('edit_file', { path: 'a.ts', old_string: '     1\tif (x) {', new_string: 'y' });
    expect(textOf(numbered)).toContain("line-number prefixes");
  });

  it('says how many times old_string matched when it is not unique, and replace_all changes all', async () => {
    h.ws.write('a.ts', 'foo();\nfoo();\nfoo();\n');
    const many = await h.run('edit_file', { path: 'a.ts', old_string: 'foo();', new_string: 'bar();' });
    expect(many.isError).toBe(true);
    expect(textOf(many)).toContain('old_string matched 3 times in a.ts');
    expect(read('a.ts')).toBe('foo();\nfoo();\nfoo();\n');
    const all = await h.run('edit_file', { path: 'a.ts', old_string: 'foo();', new_string: 'bar();', replace_all: true });
    expect(textOf(all)).toContain('(3 replacements)');
    expect(read('a.ts')).toBe('bar();\nbar();\nbar();\n');
  });

  it('applies edits in order, atomically', async () => {
    h.ws.write('a.txt', 'alpha\nbeta\ngamma\n');
    const ok = await h.run('edit_file', {
      path: 'a.txt',
      edits: [
        { old_string: 'alpha', new_string: 'ALPHA' },
        { old_string: 'ALPHA\nbeta', new_string: 'ALPHA\nBETA' },
      ],
    });
    expect(ok.isError).toBeFalsy();
    expect(read('a.txt')).toBe('ALPHA\nBETA\ngamma\n');
    const failed = await h.run('edit_file', {
      path: 'a.txt',
      edits: [
        { old_string: 'gamma', new_string: 'GAMMA' },
        { old_string: 'delta', new_string: 'DELTA' },
      ],
    });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toContain('edits[1]: old_string matched 0 times in a.txt. Read the file again and quote its text exactly. No edit was applied.');
    expect(read('a.txt')).toBe('ALPHA\nBETA\ngamma\n');
  });

  it('keeps CRLF line endings when the model writes LF', async () => {
    h.ws.write('win.txt', 'one\r\ntwo\r\nthree\r\n');
    const result = await h.run('edit_file', { path: 'win.txt', old_string: 'one\ntwo', new_string: 'one\ntwo and a half\nmore' });
    expect(result.isError).toBeFalsy();
    expect(read('win.txt')).toBe('one\r\ntwo and a half\r\nmore\r\nthree\r\n');
    expect(textOf(result)).toContain('+two and a half\n+more');
    const single = await h.run('edit_file', { path: 'win.txt', old_string: 'three', new_string: '3\n4' });
    expect(single.isError).toBeFalsy();
    expect(read('win.txt')).toBe('one\r\ntwo and a half\r\nmore\r\n3\r\n4\r\n');
  });

  it('keeps a UTF-8 BOM and UTF-16 encoding', async () => {
    writeFileSync(h.ws.path('bom.txt'), Buffer.from('\ufeffkey = 1\n', 'utf8'));
    await h.run('edit_file', { path: 'bom.txt', old_string: 'key = 1', new_string: 'key = 2' });
    expect(readFileSync(h.ws.path('bom.txt'))).toEqual(Buffer.from('\ufeffkey = 2\n', 'utf8'));
    writeFileSync(h.ws.path('u16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo\n', 'utf16le')]));
    await h.run('edit_file', { path: 'u16.txt', old_string: 'héllo', new_string: 'wörld' });
    expect(readFileSync(h.ws.path('u16.txt'))).toEqual(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('wörld\n', 'utf16le')]));
  });

  it('creates a missing file with an empty old_string, and refuses other edits to missing files', async () => {
    const created = await h.run('edit_file', { path: 'new/file.md', old_string: '', new_string: '# Title\n' });
    expect(textOf(created)).toContain('Created new/file.md.');
    expect(read('new/file.md')).toBe('# Title\n');
    const missing = await h.run('edit_file', { path: 'new/fil.md', old_string: 'a', new_string: 'b' });
    expect(textOf(missing)).toContain('File not found: new/fil.md. Did you mean new/file.md?');
  });

  it('refuses no-op edits, empty old_string on a non-empty file, and binary files', async () => {
    h.ws.write('a.txt', 'abc\n');
    expect(textOf(await h.run('edit_file', { path: 'a.txt', old_string: 'abc', new_string: 'abc' }))).toContain('are the same');
    expect(textOf(await h.run('edit_file', { path: 'a.txt', old_string: '', new_string: 'x' }))).toContain('old_string is empty');
    writeFileSync(h.ws.path('b.bin'), Buffer.from([0, 1, 2]));
    expect(textOf(await h.run('edit_file', { path: 'b.bin', old_string: 'a', new_string: 'b' }))).toContain('binary file');
  });

  it('lets write_file overwrite a file the session edited', async () => {
    h.ws.write('a.txt', 'abc\n');
    await h.run('edit_file', { path: 'a.txt', old_string: 'abc', new_string: 'def' });
    expect((await h.run('write_file', { path: 'a.txt', content: 'ghi\n' })).isError).toBeFalsy();
  });

  it('rejects input that gives neither old_string nor edits, or both', () => {
    const tool = h.kernel.tools.get('edit_file')!;
    const neither = tool.input.safeParse({ path: 'a' });
    expect(neither.success).toBe(false);
    expect(neither.error?.issues.map((i) => i.path.join('.'))).toEqual(['old_string', 'new_string']);
    const both = tool.input.safeParse({ path: 'a', old_string: 'x', new_string: 'y', edits: [{ old_string: 'a', new_string: 'b' }] });
    expect(both.error?.issues[0].path).toEqual(['edits']);
  });

  it('refuses a directory', async () => {
    h.ws.write('dir/x', '');
    expect(textOf(await h.run('edit_file', { path: 'dir', old_string: 'a', new_string: 'b' }))).toBe('dir is a directory, not a file.');
    expect(textOf(await h.run('write_file', { path: 'dir', content: 'b' }))).toBe('dir is a directory, not a file.');
  });
});

