/**
 * The session file's group commit: a sync at the end of a turn runs in the background, and closing syncs only
 * what no sync covers yet, so a run that ends right after its last turn pays for one fdatasync, not two.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { until } from '../../helpers/until.js';

const calls = vi.hoisted(() => ({ background: 0, now: 0 }));
/** Folder syncs: in the thread pool (`fsync`) and on the spot (`fsyncSync`); `failBackground` makes the former fail. */
const dirSyncs = vi.hoisted(() => ({ background: 0, now: 0, failBackground: false, failed: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  return {
    ...fs,
    fdatasync: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => {
      calls.background++;
      fs.fdatasync(fd, done);
    },
    fdatasyncSync: (fd: number) => {
      calls.now++;
      fs.fdatasyncSync(fd);
    },
    fsync: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => {
      dirSyncs.background++;
      if (dirSyncs.failBackground)
        setImmediate(() => {
          done(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
          dirSyncs.failed++;
        });
      else fs.fsync(fd, done);
    },
    fsyncSync: (fd: number) => {
      dirSyncs.now++;
      fs.fsyncSync(fd);
    },
  };
});

const { SessionWriter } = await import('../../../plugins/session-store/writer.js');
const { createRedactor } = await import('../../../plugins/session-store/secrets.js');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  calls.background = calls.now = 0;
  dirSyncs.background = dirSyncs.now = dirSyncs.failed = 0;
  dirSyncs.failBackground = false;
});

function writer(fsync = true) {
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-writer-'));
  dirs.push(dir);
  const w = new SessionWriter(path.join(dir, 's.jsonl'), { fsync, redact: createRedactor([]), id: 's' });
  w.open();
  return w;
}
const record = (n: number) => ({ type: 'message', at: n, message: { role: 'user', content: `m${n}` } }) as never;

describe('the session writer’s syncs', () => {
  it('closes without a second sync when the turn’s sync covers every record, and the file is whole', async () => {
    const w = writer();
    w.append(record(1));
    w.append(record(2));
    w.sync();
    w.close();
    expect(calls).toEqual({ background: 1, now: 0 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readFileSync(w.file, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('syncs at close what was written after the last sync started, and nothing twice', () => {
    const w = writer();
    w.append(record(1));
    w.sync();
    w.append(record(2));
    w.sync(); // in flight: queued behind the first
    w.close();
    expect(calls).toEqual({ background: 1, now: 1 });
    const again = writer();
    again.append(record(1));
    again.sync();
    again.sync();
    expect(calls.background).toBe(2);
  });

  it('never syncs with fsync off, and a close with nothing written syncs nothing', () => {
    const off = writer(false);
    off.append(record(1));
    off.sync();
    off.close();
    const idle = writer();
    idle.close();
    expect(calls).toEqual({ background: 0, now: 0 });
  });

  it('syncs the folders of a new session file in the background, not while the session opens', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'keel-writer-'));
    dirs.push(root);
    const w = new SessionWriter(path.join(root, 'sessions', 'project', 's.jsonl'), { fsync: true, redact: createRedactor([]), id: 's' });
    w.open();
    // the file's folder and the two folders the open created
    expect(dirSyncs).toMatchObject({ background: 3, now: 0 });
    // closing while they are in flight syncs nothing twice (they end before the process exits)
    w.close();
    expect(dirSyncs).toMatchObject({ background: 3, now: 0 });
  });

  it('syncs a folder at close when its background sync failed, and still releases the lock', async () => {
    dirSyncs.failBackground = true;
    const w = writer();
    await until(() => dirSyncs.failed > 0, 'the background sync to fail');
    w.close();
    expect(dirSyncs).toMatchObject({ background: 1, now: 1 });
    // the lock is free: another writer can open the same file
    const again = new SessionWriter(w.file, { fsync: false, redact: createRedactor([]), id: 's' });
    again.open();
    again.close();
  });

  it('a folder that cannot be synced at close fails the close, but the file and the lock are released', async () => {
    dirSyncs.failBackground = true;
    const w = writer();
    await until(() => dirSyncs.failed > 0, 'the background sync to fail');
    rmSync(path.dirname(w.file), { recursive: true, force: true });
    expect(() => w.close()).toThrow(/ENOENT/);
    expect(w.isOpen).toBe(false);
  });
});
