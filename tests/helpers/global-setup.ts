/**
 * vitest's global setup: gives the run its marker (run-marker.ts) and a temp folder of its own
 * (`$TMPDIR/keel-tests-<marker>-…`, made the workers' TMPDIR, so every temp folder a test or a helper makes lands
 * in it), and ends what the run left behind (reap-run.mjs) when it ends — at teardown, and on Ctrl+C or SIGTERM,
 * which vitest answers without a teardown: marked processes get SIGTERM at once (a keel removes its own temp
 * folders as it exits), then a detached reaper sends SIGKILL to what is left and removes the folders again 2, 5
 * and 10 seconds later, for what workers still made while they were being stopped. Interrupted, vitest also leaves
 * its own folder of transformed modules (`project.tmpDir`): removed too.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { runMarker } from './run-marker.js';
import { cleanRun } from './reap-run.mjs';

export { cleanRun };

export default function setup(project: TestProject): () => void {
  const marker = runMarker;
  const previousTmp = process.env.TMPDIR;
  const tmpBase = os.tmpdir();
  const runTmp = mkdtempSync(path.join(tmpBase, `keel-tests-${marker}-`));
  // Open to others, as the temp folder itself is: some tests run keel as another user (nobody) in their folders.
  chmodSync(runTmp, 0o755);
  process.env.TMPDIR = runTmp;
  let reaped = false;
  const reap = (interrupted: boolean) => {
    if (reaped) return;
    reaped = true;
    const folders = interrupted ? [project.tmpDir] : [];
    cleanRun(marker, { signal: 'SIGTERM', tmpBase, folders });
    if (previousTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmp;
    const reaper = [fileURLToPath(new URL('./reap-run.mjs', import.meta.url)), marker, 'SIGKILL', '2000', '5000', '10000', '--', ...folders];
    spawn(process.execPath, reaper, { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, TMPDIR: tmpBase } }).unref();
  };
  process.once('SIGINT', () => reap(true));
  process.once('SIGTERM', () => reap(true));
  process.once('exit', () => reap(true));
  return () => reap(false);
}
