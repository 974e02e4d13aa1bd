import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, textOf, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await harness([toolsFs()]);
});
afterEach(() => h.cleanup());

describe('write_file', () => {
  it('creates a file and its folders', async () => {
    const result = await h.run('write_file', { path: 'a/b/new.txt', content: 'one\ntwo\n' });
    expect(textOf(result)).toBe('Created a/b/new.txt (2 lines).');
    expect(readFileSync(h.ws.path('a/b/new.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('refuses to overwrite a file the session has not read', async () => {
    h.ws.write('keep.txt', 'precious\n');
    const result = await h.run('write_file', { path: 'keep.txt', content: 'clobbered' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('keep.txt already exists and this session has not read it');
    expect(readFileSync(h.ws.path('keep.txt'), 'utf8')).toBe('precious\n');
  });

  it('refuses a file that changed on disk since it was read, and allows it after a new read', async () => {
    h.ws.write('doc.txt', 'v1\n');
    await h.run('read_file', { path: 'doc.txt' });
    writeFileSync(h.ws.path('doc.txt'), 'v2 from the user\n');
    const stale = await h.run('write_file', { path: 'doc.txt', content: 'agent\n' });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toContain('doc.txt has changed on disk since this session read it');
    expect(readFileSync(h.ws.path('doc.txt'), 'utf8')).toBe('v2 from the user\n');

    await h.run('read_file', { path: 'doc.txt' });
    const ok = await h.run('write_file', { path: 'doc.txt', content: 'agent\n' });
    expect(textOf(ok)).toBe('Overwrote doc.txt (1 line).');
    expect(ok.display?.diff).toContain('-v2 from the user\n+agent');
    expect(readFileSync(h.ws.path('doc.txt'), 'utf8')).toBe('agent\n');
  });

  it('accepts a file whose mtime changed but whose bytes did not', async () => {
    h.ws.write('same.txt', 'same\n');
    await h.run('read_file', { path: 'same.txt' });
    utimesSync(h.ws.path('same.txt'), new Date(2001, 1, 1), new Date(2001, 1, 1));
    expect((await h.run('write_file', { path: 'same.txt', content: 'new\n' })).isError).toBeFalsy();
  });

  it('keeps read state per session', async () => {
    h.ws.write('shared.txt', 'x\n');
    await h.run('read_file', { path: 'shared.txt' });
    const other = await h.newSession();
    const result = await h.run('write_file', { path: 'shared.txt', content: 'y' }, { session: other });
    expect(textOf(result)).toContain('has not read it');
  });

  it('may write again a file it wrote itself, and keeps a UTF-8 BOM', async () => {
    writeFileSync(h.ws.path('bom.txt'), Buffer.from('\ufeffold\n', 'utf8'));
    await h.run('read_file', { path: 'bom.txt' });
    await h.run('write_file', { path: 'bom.txt', content: 'first\n' });
    expect((await h.run('write_file', { path: 'bom.txt', content: 'second\n' })).isError).toBeFalsy();
    expect(readFileSync(h.ws.path('bom.txt'))).toEqual(Buffer.from('\ufeffsecond\n', 'utf8'));
  });
});
