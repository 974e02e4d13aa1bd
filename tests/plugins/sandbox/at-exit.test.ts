/**
 * Many kernels in one process (an SDK host, a test file) each sandboxing commands: the sandbox's work at exit
 * (checking the commands still running, removing its temp folders) sits behind one `exit` listener for all of
 * them, not one per kernel (which piled up past Node's limit of ten, MaxListenersExceededWarning, and kept every
 * kernel alive). Its own file, so the process starts with none of the sandbox's listeners.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kernel, Session } from '../../../kernel/index.js';
import sandbox from '../../../plugins/sandbox/index.js';
import { findOnPath, probe } from '../../../plugins/sandbox/bwrap.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace } from '../../helpers/workspace.js';

const bwrap = findOnPath('bwrap');
const skipReason = bwrap ? probe(bwrap) : 'bubblewrap (bwrap) is not installed';

// The sandbox's temp folders go under TMPDIR: this file's own, removed at its end.
const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'keel-sandbox-tests-'));
const previousTmp = process.env.TMPDIR;
beforeAll(() => {
  process.env.TMPDIR = tmpRoot;
});
afterAll(() => {
  if (previousTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmp;
  rmSync(tmpRoot, { recursive: true, force: true });
});

async function run(kernel: Kernel, session: Session, command: string): Promise<number | null> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const wrapped = (await kernel.services.get('sandbox')!.wrap({ command, cwd: session.cwd, session, env }))!;
  const child = spawn(wrapped.file, wrapped.args, { cwd: session.cwd, env, stdio: 'ignore' });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  await wrapped.finish();
  return code;
}

describe.skipIf(Boolean(skipReason))('the sandbox at exit, with many kernels in one process', () => {
  it('adds one exit listener for all of them, drops a kernel’s part when its commands end, and removes every temp folder at exit', async () => {
    const before = process.listeners('exit');
    const added = () => process.listeners('exit').filter((l) => !before.includes(l));
    const tmpDirs: string[] = [];
    const pending: Array<{ finish(): Promise<string | undefined> }> = [];
    for (let i = 0; i < 15; i++) {
      const ws = makeWorkspace({ git: true });
      try {
        const kernel = testKernel([sandbox()], { sandbox: { enabled: true } });
        const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
        expect(await run(kernel, session, 'true')).toBe(0);
        // A command wrapped and not finished: its check is due at exit.
        pending.push((await kernel.services.get('sandbox')!.wrap({ command: 'true', cwd: ws.dir, session, env: {} }))!);
        tmpDirs.push((session.data.get('sandbox') as { tmpDir: string }).tmpDir);
        expect(added()).toHaveLength(1);
      } finally {
        ws.cleanup();
      }
    }
    for (const command of pending) await command.finish();
    for (const dir of tmpDirs) expect(existsSync(dir)).toBe(true);
    const listeners = added();
    expect(listeners).toHaveLength(1);
    listeners[0]!.call(process, 0);
    for (const dir of tmpDirs) expect(existsSync(dir)).toBe(false);
    // Nothing left to do at exit: the listener is gone.
    expect(added()).toHaveLength(0);
  });
});
