import { linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFile, removeFile, replaceFile } from '../../../plugins/tools-fs/atomic.js';
import { OpenError } from '../../../plugins/tools-fs/safe-open.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
let outside: string;
beforeEach(() => {
  ws = makeWorkspace();
  outside = path.join(path.dirname(ws.dir), `outside-${path.basename(ws.dir)}`);
  mkdirSync(outside, { recursive: true });
  writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
});
afterEach(() => {
  ws.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

const identity = (file: string) => {
  const info = statSync(file);
  return { dev: info.dev, ino: info.ino };
};

async function refusal(promise: Promise<unknown>): Promise<OpenError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenError);
  return err as OpenError;
}

describe('replaceFile and removeFile', () => {
  it('replaces a file with a new one renamed into place, with the mode asked for and no temporary file left', async () => {
    const file = ws.write('a.txt', 'old\n');
    await replaceFile(file, Buffer.from('new\n'), { shown: 'a.txt', mode: 0o640, expect: identity(file) });
    expect(readFileSync(file, 'utf8')).toBe('new\n');
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readdirSync(ws.dir).filter((n) => n.includes('keel'))).toEqual([]);
  });

  it('creates a missing file (and its folder) only when nothing is expected there', async () => {
    const file = path.join(ws.dir, 'gone', 'b.txt');
    await replaceFile(file, Buffer.from('back\n'), { shown: 'gone/b.txt', mode: 0o600, expect: 'absent' });
    expect(readFileSync(file, 'utf8')).toBe('back\n');
    const other = ws.write('c.txt', 'someone made this\n');
    expect((await refusal(replaceFile(other, Buffer.from('x'), { shown: 'c.txt', mode: 0o644, expect: 'absent' }))).kind).toBe('moved');
    expect(readFileSync(other, 'utf8')).toBe('someone made this\n');
  });

  it('refuses a name that became a symbolic link, a hard link, or another file, and a folder swapped for a link', async () => {
    const file = ws.write('d.txt', 'mine\n');
    const was = identity(file);
    unlinkSync(file);
    symlinkSync(path.join(outside, 'secret.txt'), file);
    expect((await refusal(replaceFile(file, Buffer.from('x'), { shown: 'd.txt', mode: 0o644, expect: was }))).kind).toBe('symlink');
    expect((await refusal(removeFile(file, { shown: 'd.txt', expect: was }))).kind).toBe('symlink');
    expect(lstatSync(file).isSymbolicLink()).toBe(true);

    const linked = path.join(ws.dir, 'e.txt');
    linkSync(path.join(outside, 'secret.txt'), linked);
    expect((await refusal(replaceFile(linked, Buffer.from('x'), { shown: 'e.txt', mode: 0o644, expect: identity(linked) }))).message).toContain('has 2 hard links');

    const swapped = ws.write('f.txt', 'first\n');
    const first = identity(swapped);
    writeFileSync(`${swapped}.new`, 'second\n');
    renameSync(`${swapped}.new`, swapped);
    expect((await refusal(replaceFile(swapped, Buffer.from('x'), { shown: 'f.txt', mode: 0o644, expect: first }))).kind).toBe('moved');
    expect(readFileSync(swapped, 'utf8')).toBe('second\n');

    const inner = ws.write('sub/g.txt', 'g\n');
    const g = identity(inner);
    renameSync(path.join(ws.dir, 'sub'), path.join(ws.dir, 'sub.old'));
    writeFileSync(path.join(outside, 'g.txt'), 'outside g\n');
    symlinkSync(outside, path.join(ws.dir, 'sub'));
    expect((await refusal(replaceFile(inner, Buffer.from('x'), { shown: 'sub/g.txt', mode: 0o644, expect: g }))).message).toContain('a folder in the path of sub/g.txt now leads to');
    expect(readFileSync(path.join(outside, 'g.txt'), 'utf8')).toBe('outside g\n');
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });

  it('removes the file it expects, and nothing when it expects nothing', async () => {
    const file = ws.write('h.txt', 'h\n');
    await removeFile(file, { shown: 'h.txt', expect: identity(file) });
    expect(() => lstatSync(file)).toThrow();
    await removeFile(file, { shown: 'h.txt', expect: 'absent' });
  });
});

describe('createFile', () => {
  it('creates a new file and its folders whole, with the mode asked for and no temporary file left', async () => {
    const file = path.join(ws.dir, 'new', 'deep', 'a.md');
    await createFile(file, Buffer.from('fresh\n'), { shown: 'new/deep/a.md', mode: 0o640 });
    expect(readFileSync(file, 'utf8')).toBe('fresh\n');
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(statSync(file).nlink).toBe(1);
    expect(readdirSync(path.dirname(file))).toEqual(['a.md']);
  });

  it('never replaces what is at the name: a file, a symbolic link (to a file outside, or to nothing), a folder', async () => {
    const file = ws.write('b.md', 'mine\n');
    const err = await refusal(createFile(file, Buffer.from('x'), { shown: 'b.md', mode: 0o644 }));
    expect([err.kind, err.message]).toEqual(['exists', 'b.md already exists']);
    expect(readFileSync(file, 'utf8')).toBe('mine\n');

    const link = path.join(ws.dir, 'c.md');
    symlinkSync(path.join(outside, 'secret.txt'), link);
    expect((await refusal(createFile(link, Buffer.from('x'), { shown: 'c.md', mode: 0o644 }))).kind).toBe('exists');
    const dangling = path.join(ws.dir, 'd.md');
    symlinkSync(path.join(outside, 'planted.txt'), dangling);
    expect((await refusal(createFile(dangling, Buffer.from('x'), { shown: 'd.md', mode: 0o644 }))).kind).toBe('exists');
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    expect(readdirSync(outside)).toEqual(['secret.txt']);

    mkdirSync(path.join(ws.dir, 'e.md'));
    expect((await refusal(createFile(path.join(ws.dir, 'e.md'), Buffer.from('x'), { shown: 'e.md', mode: 0o644 }))).kind).toBe('exists');
    expect(readdirSync(ws.dir).filter((n) => n.includes('keel'))).toEqual([]);
  });

  it('refuses a folder in the path that is a symbolic link now', async () => {
    symlinkSync(outside, path.join(ws.dir, 'out'));
    const err = await refusal(createFile(path.join(ws.dir, 'out', 'f.md'), Buffer.from('x'), { shown: 'out/f.md', mode: 0o644 }));
    expect(err.message).toContain('a folder in the path of out/f.md now leads to');
    expect(readdirSync(outside)).toEqual(['secret.txt']);
  });
});
