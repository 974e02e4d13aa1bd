/** Spawns the built `keel` binary as a real process. Run `npm run build` (npm test does) first. */
import { RUN_MARKER_VAR, runMarker } from './run-marker.js';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertFreshBuild } from './fresh-build.js';

export const KEEL_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/keel.js');

// Every e2e file spawns the binary through this module: refuse to test an old build of edited sources.
assertFreshBuild(path.resolve(path.dirname(KEEL_BIN), '..'));

export interface KeelRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SpawnOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. Without it stdin is closed at once (no TTY). */
  input?: string;
  timeoutMs?: number;
  /** Another launcher than this checkout's bin/keel.js (a copied or installed package). */
  bin?: string;
  /** A file descriptor to give as stdin instead of a pipe (a file or /dev/null, as a shell redirect would). */
  stdinFd?: number;
}

/** PATH with this Node first: the `keel` executable runs the `node` it finds there, as it would for a user. */
export const NODE_PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;

/** Environment for a hermetic run: only what the test gives, plus PATH/HOME basics. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  // The run's marker lets the global teardown find a keel process a Ctrl+C left running.
  const env: NodeJS.ProcessEnv = { PATH: NODE_PATH, LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', [RUN_MARKER_VAR]: runMarker };
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) env[key] = value;
  return env;
}

/** Runs `keel` as a user's shell does: the executable itself, which starts from the build's start-up snapshot. */
export function spawnKeel(args: string[], opts: SpawnOptions): ChildProcess {
  const child = spawn(opts.bin ?? KEEL_BIN, args, { cwd: opts.cwd, env: cleanEnv(opts.env), stdio: [opts.stdinFd ?? 'pipe', 'pipe', 'pipe'] });
  if (opts.stdinFd !== undefined) return child;
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  else child.stdin!.end();
  return child;
}

export function runKeel(args: string[], opts: SpawnOptions): Promise<KeelRun> {
  const child = spawnKeel(args, opts);
  return collect(child, opts.timeoutMs ?? 60_000);
}

export function collect(child: ChildProcess, timeoutMs = 60_000): Promise<KeelRun> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`keel did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Parses NDJSON output (stream-json). */
export function ndjson(text: string): any[] {
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}
