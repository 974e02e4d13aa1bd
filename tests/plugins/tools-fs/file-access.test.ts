/**
 * The optional `file-access` service: when a host (an editor) offers it for a session, read_file, write_file and
 * edit_file read and write that session's text files through it; images and other sessions use the disk.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import type { FileAccess } from '../../../plugins/tools-fs/index.js';
import type { Plugin, Session } from '../../../kernel/index.js';
import { harness, textOf, type Harness } from './harness.js';

/** An editor's buffers: path → text; `fail` makes the next call of that kind reject. */
class Editor implements FileAccess {
  buffers = new Map<string, string>();
  writes: Array<{ path: string; text: string }> = [];
  sessions = new Set<Session>();
  fail: { read?: string; write?: string } = {};
  handles(session: Session) {
    return this.sessions.has(session);
  }
  async readText(_session: Session, abs: string) {
    if (this.fail.read) throw new Error(this.fail.read);
    const text = this.buffers.get(abs);
    if (text === undefined) throw Object.assign(new Error(`${abs}: not found`), { code: 'ENOENT' });
    return text;
  }
  async writeText(_session: Session, abs: string, text: string) {
    if (this.fail.write) throw new Error(this.fail.write);
    this.writes.push({ path: abs, text });
    this.buffers.set(abs, text);
  }
}

let h: Harness;
let editor: Editor;
beforeEach(async () => {
  editor = new Editor();
  const host: Plugin = { name: 'test-editor', kernel: '^1.0.0', apply: (k) => k.services.provide('file-access', editor) };
  h = await harness([host, toolsFs()]);
  editor.sessions.add(h.session);
});
afterEach(() => h.cleanup());

describe('the file-access service', () => {
  it('read_file reads the editor buffer, not the disk; another session reads the disk', async () => {
    const file = h.ws.write('a.txt', 'on disk\n');
    editor.buffers.set(file, 'unsaved line one\nline two\n');
    expect(textOf(await h.run('read_file', { path: 'a.txt', offset: 2 }))).toContain('     2\tline two');
    expect(textOf(await h.run('read_file', { path: 'a.txt' }))).toContain('unsaved line one');
    const other = await h.newSession();
    expect(textOf(await h.run('read_file', { path: 'a.txt' }, { session: other }))).toContain('on disk');
  });

  it('names a missing file and an editor failure', async () => {
    const missing = await h.run('read_file', { path: 'nope.txt' });
    expect(missing).toMatchObject({ isError: true });
    expect(textOf(missing)).toContain('File not found: nope.txt.');
    h.ws.write('b.txt', 'x');
    editor.buffers.set(h.ws.path('b.txt'), 'x');
    editor.fail.read = 'the buffer is locked';
    expect(textOf(await h.run('read_file', { path: 'b.txt' }))).toBe('read_file: b.txt: the editor could not read it: the buffer is locked');
  });

  it('edit_file edits the buffer and writes it back through the editor, with the whole old and new text in its display', async () => {
    const file = h.ws.write('c.txt', 'disk text\n');
    editor.buffers.set(file, 'buffer text\n');
    const result = await h.run('edit_file', { path: 'c.txt', old_string: 'buffer', new_string: 'edited' });
    expect(result.isError).toBeFalsy();
    expect(editor.writes).toEqual([{ path: file, text: 'edited text\n' }]);
    expect(readFileSync(file, 'utf8')).toBe('disk text\n');
    expect(result.display).toMatchObject({ path: file, oldText: 'buffer text\n', newText: 'edited text\n' });
    // Text the buffer does not hold is not found, even when the disk holds it.
    expect(textOf(await h.run('edit_file', { path: 'c.txt', old_string: 'disk', new_string: 'x' }))).toContain('old_string matched 0 times');
  });

  it('edit_file creates a missing file through the editor with an empty old_string, and refuses other edits of it', async () => {
    expect(textOf(await h.run('edit_file', { path: 'new.txt', old_string: 'a', new_string: 'b' }))).toContain('File not found: new.txt.');
    const created = await h.run('edit_file', { path: 'new.txt', old_string: '', new_string: 'fresh\n' });
    expect(created.display).toMatchObject({ created: true, oldText: null, newText: 'fresh\n' });
    expect(editor.writes).toEqual([{ path: h.ws.path('new.txt'), text: 'fresh\n' }]);
  });

  it('write_file keeps the read-before-overwrite rule on the buffer, and reports a failed write', async () => {
    const file = h.ws.write('d.txt', 'disk\n');
    editor.buffers.set(file, 'buffer\n');
    expect(textOf(await h.run('write_file', { path: 'd.txt', content: 'new\n' }))).toContain('has not read it');
    await h.run('read_file', { path: 'd.txt' });
    editor.buffers.set(file, 'changed in the editor since\n');
    expect(textOf(await h.run('write_file', { path: 'd.txt', content: 'new\n' }))).toContain('has changed on disk since this session read it');
    await h.run('read_file', { path: 'd.txt' });
    const written = await h.run('write_file', { path: 'd.txt', content: 'new\n' });
    expect(written.display).toMatchObject({ oldText: 'changed in the editor since\n', newText: 'new\n' });
    expect(editor.buffers.get(file)).toBe('new\n');
    editor.fail.write = 'read-only buffer';
    expect(textOf(await h.run('write_file', { path: 'e.txt', content: 'x' }))).toBe('write_file: e.txt: the editor could not write it: read-only buffer');
  });

  it('without the service for the session, edits carry the old and new text too (from the disk)', async () => {
    const other = await h.newSession();
    const file = h.ws.write('f.txt', 'one\n');
    const result = await h.run('edit_file', { path: 'f.txt', old_string: 'one', new_string: 'two' }, { session: other });
    expect(result.display).toMatchObject({ oldText: 'one\n', newText: 'two\n' });
    expect(readFileSync(file, 'utf8')).toBe('two\n');
    expect(editor.writes).toEqual([]);
  });
});
