/**
 * vitest's global setup: gives the run its marker (run-marker.ts) and ends what the run left behind
 * (reap-run.mjs) when it ends — at teardown, and on Ctrl+C or SIGTERM, which vitest answers without a teardown —
 * at once, and again 2, 5 and 10 seconds later from a detached reaper, for what workers still made while they
 * were being stopped.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runMarker } from './run-marker.js';
import { cleanRun } from './reap-run.mjs';

export { cleanRun };

export default function setup(): () => void {
  const marker = runMarker;
  let reaped = false;
  const reap = () => {
    if (reaped) return;
    reaped = true;
    cleanRun(marker);
    spawn(process.execPath, [fileURLToPath(new URL('./reap-run.mjs', import.meta.url)), marker, '2000', '5000', '10000'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH } }).unref();
  };
  process.once('SIGINT', reap);
  process.once('SIGTERM', reap);
  process.once('exit', reap);
  return reap;
}
