/**
 * Ends what a test run left behind, by its marker (see run-marker.ts): the tmux servers on its sockets, the
 * processes whose environment carries it, and its temp folders (the run's TMPDIR, `keel-tests-<marker>-…`, and
 * any other entry named `…-<marker>-…` in the temp folder or /var/tmp). Run as a script
 * (`node reap-run.mjs <marker> <signal> <delayMs>… [-- <folder>…]`) it waits first, so it also catches what a
 * worker made while vitest was shutting down after Ctrl+C.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MARKER_VAR = 'KEEL_TEST_RUN';

function list(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** This process and its ancestors: a marker set outside the run (`KEEL_TEST_RUN=x npm test`) is theirs too. */
function ownLine() {
  const pids = new Set();
  for (let pid = process.pid; pid > 1 && !pids.has(pid); ) {
    pids.add(pid);
    try {
      pid = Number(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\) /s, '').split(' ')[1]);
    } catch {
      break;
    }
  }
  return pids;
}

/** Processes whose environment carries the marker (Linux /proc), never this process or its ancestors. */
function markedProcesses(marker) {
  const wanted = `${MARKER_VAR}=${marker}\0`;
  const found = [];
  const own = ownLine();
  for (const entry of list('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || own.has(pid)) continue;
    try {
      if (`${readFileSync(`/proc/${pid}/environ`, 'latin1')}\0`.includes(wanted)) found.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/**
 * `signal`: what the marked processes get. The teardown sends SIGTERM first, so a keel removes its own temp
 * folders as it exits; the reaper's later passes send SIGKILL to what is still there. `tmpBase`: the temp folder
 * the run's folders are in (the run itself points TMPDIR into one of them). `folders`: more to remove.
 */
export function cleanRun(marker, { signal = 'SIGKILL', tmpBase = os.tmpdir(), folders = [] } = {}) {
  const socketDir = path.join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${process.getuid?.() ?? 0}`);
  for (const name of list(socketDir)) if (name.includes(`-${marker}-`)) spawnSync('tmux', ['-L', name, 'kill-server'], { stdio: 'ignore' });
  for (const pid of markedProcesses(marker)) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
  for (const base of new Set([tmpBase, '/var/tmp'])) {
    for (const name of list(base)) if (name.includes(`-${marker}-`)) rmSync(path.join(base, name), { recursive: true, force: true });
  }
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const split = args.indexOf('--');
  const [marker, signal, ...delays] = split < 0 ? args : args.slice(0, split);
  const folders = split < 0 ? [] : args.slice(split + 1);
  if (marker) for (const delay of delays) setTimeout(() => cleanRun(marker, { signal, folders }), Number(delay) || 0);
}
