/** Guards for the test suite itself: private tmux servers and no e2e run against a stale build. */
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { staleBuild } from '../helpers/fresh-build.js';
import { privateTmux } from '../helpers/tmux.js';
import { cleanRun } from '../helpers/global-setup.js';
import { RUN_MARKER_VAR } from '../helpers/run-marker.js';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';
import { until } from '../helpers/until.js';

const TESTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? testFiles(full) : /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

let ws: Workspace | undefined;

/** Running (a zombie waiting for its parent to collect it counts as ended). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return false;
  }
}

/** Polls `done` until it holds or `timeoutMs` passes. */
afterEach(() => {
  ws?.cleanup();
  ws = undefined;
});

describe('test hygiene', () => {
  it('the global teardown (also run on Ctrl+C) ends a run\'s tmux servers, marked processes and temp folders, and only that run\'s', async () => {
    const marker = `r${Date.now().toString(16).slice(-8)}`;
    const other = `${marker}x`;
    const socket = `keel-ui-${marker}-0123456789ab`;
    spawnSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', 'sleep 600']);
    const sleeper = spawn('sleep', ['600'], { env: { PATH: process.env.PATH, [RUN_MARKER_VAR]: marker }, stdio: 'ignore' });
    const bystander = spawn('sleep', ['600'], { env: { PATH: process.env.PATH, [RUN_MARKER_VAR]: other }, stdio: 'ignore' });
    const folder = mkdtempSync(path.join(os.tmpdir(), `keel-test-${marker}-`));
    const kept = mkdtempSync(path.join(os.tmpdir(), `keel-test-${other}-`));
    try {
      const exited = new Promise((resolve) => sleeper.once('exit', resolve));
      cleanRun(marker);
      await exited;
      expect(spawnSync('tmux', ['-L', socket, 'has-session']).status).not.toBe(0);
      expect(existsSync(folder)).toBe(false);
      expect(existsSync(kept)).toBe(true);
      expect(bystander.exitCode).toBeNull();
    } finally {
      spawnSync('tmux', ['-L', socket, 'kill-server']);
      sleeper.kill('SIGKILL');
      bystander.kill('SIGKILL');
      cleanRun(other);
    }
  });

  it.skipIf(spawnSync('tmux', ['-V']).status !== 0)('Ctrl+C to a running vitest leaves no tmux server, keel process or temp folder behind', async () => {
    ws = makeWorkspace();
    const marker = `r${randomBytes(4).toString('hex')}`;
    const ready = ws.path('ready.json');
    const tmp = ws.path('tmp');
    mkdirSync(tmp);
    const vitest = path.join(TESTS, '..', 'node_modules', 'vitest', 'vitest.mjs');
    const config = path.join(TESTS, 'fixtures', 'interrupt', 'vitest.config.ts');
    // Its own process group, as a terminal's foreground job is: Ctrl+C signals the whole group.
    const run = spawn(process.execPath, [vitest, 'run', '--config', config], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, [RUN_MARKER_VAR]: marker, KEEL_INTERRUPT_READY: ready, TMPDIR: tmp, CI: '1' },
    });
    let output = '';
    run.stdout!.on('data', (d) => (output += d));
    run.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => run.on('close', resolve));
    try {
      // (A timeout is reported by the assertions below, with vitest's output.)
      await until(() => existsSync(ready) || run.exitCode !== null, 'the held run to be ready', { timeoutMs: 90_000 }).catch(() => undefined);
      expect(existsSync(ready), output).toBe(true);
      const held = JSON.parse(readFileSync(ready, 'utf8')) as { socket: string; pids: number[]; folders: string[] };
      expect(held.pids.every((pid) => alive(pid))).toBe(true);
      expect(held.folders.every((folder) => existsSync(folder))).toBe(true);
      process.kill(-run.pid!, 'SIGINT');
      await exited;
      // The teardown's first pass runs as vitest exits; the reaper's last 10 s later.
      const clean = () => spawnSync('tmux', ['-L', held.socket, 'has-session']).status !== 0 && !held.pids.some(alive) && !held.folders.some(existsSync) && readdirSync(tmp).length === 0;
      await until(clean, 'the teardown to clean up', { timeoutMs: 30_000 }).catch(() => undefined);
      expect(spawnSync('tmux', ['-L', held.socket, 'has-session']).status).not.toBe(0);
      expect(held.pids.filter(alive)).toEqual([]);
      expect(held.folders.filter((folder) => existsSync(folder))).toEqual([]);
      // Nothing else either: vitest's own folder of transformed modules is gone too.
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      if (run.exitCode === null) process.kill(-run.pid!, 'SIGKILL');
      cleanRun(marker, { tmpBase: tmp });
    }
  }, 150_000);

  it('every tmux command in the tests goes through a private socket (tmux -L)', () => {
    // `tmux -V` starts no server; anything else must use helpers/tmux.ts.
    const direct = /(?:execFileSync|spawnSync|spawn|execFile)\(\s*'tmux'\s*,\s*\[\s*(?!'-L'|'-V')/;
    const offenders = testFiles(TESTS).filter((file) => !file.endsWith(path.join('helpers', 'tmux.ts')) && direct.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
    expect(privateTmux().socket).toMatch(/^keel-test-\d+-r[0-9a-f]{8}-[0-9a-f]{8}$/);
  });

  it('a source newer than the build, or a missing build, makes the e2e helpers refuse to run', () => {
    ws = makeWorkspace();
    const root = ws.dir;
    mkdirSync(path.join(root, 'kernel'), { recursive: true });
    mkdirSync(path.join(root, 'dist', 'bin'), { recursive: true });
    mkdirSync(path.join(root, 'dist', 'kernel'), { recursive: true });
    const source = path.join(root, 'kernel', 'loop.ts');
    writeFileSync(source, '// source');
    expect(staleBuild(root)).toBe('dist/bin/keel.cjs is missing');
    for (const built of ['dist/bin/keel.cjs', 'dist/kernel/index.js']) writeFileSync(path.join(root, built), '// built');
    utimesSync(source, new Date(1_000_000), new Date(1_000_000));
    expect(staleBuild(root)).toBeUndefined();
    utimesSync(source, new Date(), new Date(Date.now() + 60_000));
    expect(staleBuild(root)).toBe('kernel/loop.ts is newer than dist/bin/keel.cjs');
  });
});
