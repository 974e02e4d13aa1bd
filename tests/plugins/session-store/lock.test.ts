/** The advisory lock that keeps two processes from appending to one session file. */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, isAlive, lockFileOf, processStart, SessionLockedError } from '../../../plugins/session-store/lock.js';
import { projectDir } from '../../../plugins/session-store/paths.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness, records } from './setup.js';

let ws: Workspace;
let server: ScriptedServer | undefined;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  ws.cleanup();
});

/** The pid of a process that has exited (and been reaped): nothing runs under it now. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

/** A live process other than this one: the parent of the test worker. */
const livePid = () => process.ppid;

describe('session lock', () => {
  it('is a file beside the session holding the pid; release removes it', () => {
    const file = ws.write('s.jsonl', '');
    const lock = acquireLock(file, 's');
    expect(lock.file).toBe(path.join(ws.dir, 's.lock'));
    expect(readFileSync(lock.file, 'utf8')).toMatch(new RegExp(`^${process.pid} [0-9a-f]+ ${processStart(process.pid)}\\n$`));
    lock.release();
    expect(existsSync(lock.file)).toBe(false);
  });

  it('refuses a lock held by a live process, in one line naming the pid and the lock file', () => {
    const file = ws.write('s.jsonl', '');
    const owner = `${livePid()} abc ${processStart(livePid())}\n`;
    writeFileSync(lockFileOf(file), owner);
    expect(isAlive(livePid())).toBe(true);
    let error: unknown;
    try {
      acquireLock(file, 's');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SessionLockedError);
    const message = (error as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toContain(`session s is in use by another keel process (pid ${livePid()})`);
    expect(message).toContain('--fork-session');
    expect(message).toContain(lockFileOf(file));
    // The other owner's lock is left alone.
    expect(readFileSync(lockFileOf(file), 'utf8')).toBe(owner);
  });

  it('takes over a lock whose pid now names another process (pid reuse): another start time, or not keel', () => {
    const file = ws.write('s.jsonl', '');
    expect(processStart(livePid())).toMatch(/^\d+$/);
    // Same pid, alive, but started at another time than the lock's writer.
    writeFileSync(lockFileOf(file), `${livePid()} abc 1\n`);
    acquireLock(file, 's').release();
    // A lock without a start time, held by a live process whose command line is not keel's (the test runner).
    writeFileSync(lockFileOf(file), `${livePid()} abc\n`);
    acquireLock(file, 's').release();
    expect(readdirSync(ws.dir).filter((n) => n.includes('.lock'))).toEqual([]);
  });

  it('takes over a stale lock (its process is gone) and a garbled one', () => {
    const file = ws.write('s.jsonl', '');
    const dead = deadPid();
    expect(isAlive(dead)).toBe(false);
    writeFileSync(lockFileOf(file), `${dead} old\n`);
    const lock = acquireLock(file, 's');
    expect(readFileSync(lock.file, 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    lock.release();
    writeFileSync(lockFileOf(file), 'not a pid\n');
    acquireLock(file, 's').release();
    expect(readdirSync(ws.dir).filter((n) => n.includes('.lock'))).toEqual([]);
  });

  it('a lock taken over by a newer owner in this process is not removed by the older one', () => {
    const file = ws.write('s.jsonl', '');
    const first = acquireLock(file, 's');
    const second = acquireLock(file, 's');
    first.release();
    expect(existsSync(lockFileOf(file))).toBe(true);
    second.release();
    expect(existsSync(lockFileOf(file))).toBe(false);
  });
});

describe('session-store under the lock', () => {
  it('holds the lock while the session records, and releases it on close', async () => {
    server = await startAnthropicServer([callTool('echo', { text: 'x' }, 'toolu_1'), say('done')]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, 'go');
    const file = h.store.fileOf(session)!;
    expect(readFileSync(lockFileOf(file), 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    h.store.close(session);
    expect(existsSync(lockFileOf(file))).toBe(false);
  });

  it('refuses to resume a session another live process is writing; a fork of it works', async () => {
    server = await startAnthropicServer([say('first'), say('forked')]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, 'hello');
    const file = h.store.fileOf(session)!;
    h.store.close(session);
    writeFileSync(lockFileOf(file), `${livePid()} other ${processStart(livePid())}\n`);
    const before = readFileSync(file, 'utf8');

    const h2 = harness(server, ws);
    await expect(h2.start({ resume: { id: session.id } })).rejects.toThrow(`session ${session.id} is in use by another keel process (pid ${livePid()})`);
    await expect(h2.start({ resume: { latest: true } })).rejects.toThrow(/is in use by another keel process/);
    expect(readFileSync(file, 'utf8')).toBe(before);

    const fork = await h2.start({ resume: { id: session.id, fork: true } });
    await h2.run(fork, 'again');
    expect(fork.id).not.toBe(session.id);
    expect(records(h2.store.fileOf(fork)!)[0]).toMatchObject({ type: 'header', parent: session.id });
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('resumes a session whose writer was killed (stale lock)', async () => {
    server = await startAnthropicServer([say('first'), say('second')]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, 'hello');
    const file = h.store.fileOf(session)!;
    h.store.close(session);
    writeFileSync(lockFileOf(file), `${deadPid()} killed\n`);
    const h2 = harness(server, ws);
    const resumed = await h2.start({ resume: { id: session.id } });
    const result = await h2.run(resumed, 'after');
    expect(result.result).toBe('second');
    expect(readFileSync(lockFileOf(file), 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    h2.store.close(resumed);
    expect(readdirSync(projectDir(ws.home, ws.dir)).filter((n) => n.includes('.lock'))).toEqual([]);
  });
});
