import { execFileSync } from 'node:child_process';
import { open } from 'node:fs/promises';
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { OpenError, openForWrite, openReal, readAll, realTarget } from '../../../plugins/tools-fs/safe-open.js';
import { harness, textOf, type Harness } from './harness.js';

let h: Harness;
let outside: string;
beforeEach(async () => {
  h = await harness([toolsFs()]);
  // A folder next to the project, standing for anything the permission check would not allow.
  outside = path.join(path.dirname(h.ws.dir), 'outside');
  mkdirSync(outside, { recursive: true });
  writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
});
afterEach(() => h.cleanup());

const secret = () => readFileSync(path.join(outside, 'secret.txt'), 'utf8');

async function rejection(promise: Promise<unknown>): Promise<OpenError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenError);
  return err as OpenError;
}

describe('opening files without following a symlink swapped in after the check', () => {
  it('refuses a symlink swapped in at the final component of an existing file', async () => {
    const file = h.ws.write('a.txt', 'mine\n');
    const real = await realTarget(file);
    unlinkSync(file);
    symlinkSync(path.join(outside, 'secret.txt'), file);
    for (const mode of ['read', 'update'] as const) {
      const err = await rejection(openReal(real, mode, 'a.txt'));
      expect(err.kind).toBe('symlink');
      expect(err.message).toBe('a.txt became a symbolic link after its path was checked; it was not opened. Check the path and try again.');
    }
    expect(secret()).toBe('secret\n');
  });

  it('refuses a symlink swapped in where a new file was to be created', async () => {
    const file = h.ws.path('new.txt');
    const real = await realTarget(file);
    symlinkSync(path.join(outside, 'secret.txt'), file);
    expect((await rejection(openForWrite(real, 'new.txt'))).kind).toBe('symlink');
    expect(secret()).toBe('secret\n');
  });

  it('notices a folder above the file swapped for a symlink, and does not use what it opened', async () => {
    const file = h.ws.write('dir/secret.txt', 'mine\n');
    const real = await realTarget(file);
    renameSync(h.ws.path('dir'), h.ws.path('dir-moved'));
    symlinkSync(outside, h.ws.path('dir'));
    const err = await rejection(openForWrite(real, 'dir/secret.txt'));
    expect(err.kind).toBe('moved');
    expect(secret()).toBe('secret\n');
  });

  it('the tools report the refusal instead of writing through the link', async () => {
    h.ws.write('ok.txt', 'v1\n');
    await h.run('read_file', { path: 'ok.txt' });
    // A dangling link cannot be resolved before the open: the open itself refuses it.
    symlinkSync(path.join(outside, 'missing.txt'), h.ws.path('dangling.txt'));
    const write = await h.run('write_file', { path: 'dangling.txt', content: 'x' });
    expect(write.isError).toBe(true);
    expect(textOf(write)).toBe("write_file refused: dangling.txt is a symbolic link to a missing file; use the path of the link's target instead.");
    const edit = await h.run('edit_file', { path: 'dangling.txt', old_string: '', new_string: 'x' });
    expect(textOf(edit)).toBe("edit_file: dangling.txt is a symbolic link to a missing file; use the path of the link's target instead.");
    expect(() => readFileSync(path.join(outside, 'missing.txt'))).toThrow();
  });

  it('still reads and edits through a symlink that was there all along (the target is changed)', async () => {
    h.ws.write('target.txt', 'alpha\n');
    symlinkSync('target.txt', h.ws.path('link.txt'));
    expect(textOf(await h.run('read_file', { path: 'link.txt' }))).toContain('alpha');
    expect((await h.run('edit_file', { path: 'link.txt', old_string: 'alpha', new_string: 'beta' })).isError).toBeUndefined();
    expect(readFileSync(h.ws.path('target.txt'), 'utf8')).toBe('beta\n');
    expect((await h.run('write_file', { path: 'link.txt', content: 'gamma\n' })).isError).toBeUndefined();
    expect(readFileSync(h.ws.path('target.txt'), 'utf8')).toBe('gamma\n');
  });

  it('refuses devices and FIFOs instead of reading forever or hanging', async () => {
    const devNull = await h.run('read_file', { path: '/dev/zero' });
    expect(devNull.isError).toBe(true);
    expect(textOf(devNull)).toBe('read_file: /dev/zero is not a regular file (a device, FIFO or socket); file tools read and write regular files only.');
    execFileSync('mkfifo', [h.ws.path('pipe')]);
    const fifo = await h.run('read_file', { path: 'pipe' });
    expect(textOf(fifo)).toBe('read_file: pipe is not a regular file (a device, FIFO or socket); file tools read and write regular files only.');
    const write = await h.run('write_file', { path: 'pipe', content: 'x' });
    expect(textOf(write)).toBe('write_file refused: pipe is not a regular file (a device, FIFO or socket); file tools read and write regular files only.');
    rmSync(h.ws.path('pipe'));
  });
});

describe('reading a whole file', () => {
  it('reads every byte whatever size stat gave: exact, stale (the file grew), zero, and over the growth chunk', async () => {
    const file = path.join(h.ws.dir, 'whole.bin');
    const bytes = Buffer.alloc(200 * 1024 + 7);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) % 251;
    writeFileSync(file, bytes);
    for (const size of [bytes.length, 10, 0, 64 * 1024 - 1, 64 * 1024]) {
      const handle = await open(file, 'r');
      try {
        await handle.read(Buffer.alloc(5), 0, 5, null); // the handle's position does not matter
        expect((await readAll(handle, size)).equals(bytes)).toBe(true);
      } finally {
        await handle.close();
      }
    }
    writeFileSync(file, '');
    const empty = await open(file, 'r');
    expect((await readAll(empty, 0)).length).toBe(0);
    await empty.close();
  });
});
