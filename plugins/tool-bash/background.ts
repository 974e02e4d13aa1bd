/**
 * Background shells: a command started with `run_in_background` runs in its own process group while the
 * session goes on. Its output waits in a bounded buffer until `bash_output` reads it; everything it prints
 * is also appended to a log file (bounded too), so what the buffer drops can still be read from disk.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Session } from '../../kernel/index.js';
import { descendants } from './run.js';
import { LineSplitter, stripAnsi } from './output.js';

/** Bytes of one shell's log file at most; past it the log says it stopped. */
export const LOG_LIMIT = 64 * 1024 * 1024;

export interface BackgroundShell {
  id: string;
  command: string;
  cwd: string;
  pid: number;
  startedAt: number;
  running: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Set when kill_shell (or the end of the session) stopped it. */
  killed: boolean;
  /** Output not yet read by bash_output, and how many characters fell out of it unread. */
  unread: string;
  dropped: number;
  logFile: string;
  logBytes: number;
  logFd: number | null;
  child: ChildProcess;
  reap?: () => number;
}

export interface ShellTable {
  shells: Map<string, BackgroundShell>;
  next: number;
  /** Removes the process `exit` listener that kills what is still running. */
  detach?: () => void;
}

const KEY = 'tool-bash:background';

export function shellTable(session: Session): ShellTable {
  let table = session.data.get(KEY) as ShellTable | undefined;
  if (!table) {
    table = { shells: new Map(), next: 1 };
    session.data.set(KEY, table);
  }
  return table;
}

/** The shells of a session, without creating the table. */
export function existingShells(session: Session): BackgroundShell[] {
  const table = session.data.get(KEY) as ShellTable | undefined;
  return table ? [...table.shells.values()] : [];
}

export interface StartSpec {
  session: Session;
  command: string;
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logDir: string;
  bufferLimit: number;
  /** Kills, synchronously, every process the shell started, also those that outlived its first process. */
  reap?: () => number;
  /** Called once when the shell's process is gone (the sandbox checks and puts back protected paths here). */
  onExit?: () => void;
}

/** Starts a background shell and returns it at once. */
export function startBackground(spec: StartSpec): BackgroundShell {
  const table = shellTable(spec.session);
  const id = `bash_${table.next++}`;
  mkdirSync(spec.logDir, { recursive: true, mode: 0o700 });
  const logFile = path.join(spec.logDir, `${id}.log`);
  const logFd = openSync(logFile, 'w', 0o600);
  const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const shell: BackgroundShell = {
    id,
    command: spec.command,
    cwd: spec.cwd,
    pid: child.pid ?? -1,
    startedAt: Date.now(),
    running: child.pid !== undefined,
    exitCode: null,
    signal: null,
    killed: false,
    unread: '',
    dropped: 0,
    logFile,
    logBytes: 0,
    logFd,
    child,
    reap: spec.reap,
  };
  table.shells.set(id, shell);
  if (!table.detach) {
    // A background shell never outlives Keel: on exit (the end of a session, SIGINT, SIGTERM) it is killed.
    const onExit = () => killAll(table);
    process.on('exit', onExit);
    table.detach = () => process.off('exit', onExit);
  }

  const take = (text: string) => {
    const clean = stripAnsi(text);
    appendLog(shell, clean);
    shell.unread += clean;
    if (shell.unread.length > spec.bufferLimit) {
      const cut = shell.unread.length - spec.bufferLimit;
      shell.dropped += cut;
      shell.unread = shell.unread.slice(cut);
    }
  };
  const splitters = [child.stdout, child.stderr].map((stream) => {
    const splitter = new LineSplitter(take);
    stream?.on('data', (chunk: Buffer) => splitter.write(chunk));
    // The pipes must not keep Keel alive: when the session ends, the exit listener kills the shell.
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
    return splitter;
  });
  child.unref();
  child.on('error', (err) => {
    take(`Failed to start: ${err.message}\n`);
    shell.running = false;
  });
  child.on('close', (code, signal) => {
    for (const splitter of splitters) splitter.end();
    shell.running = false;
    shell.exitCode = code;
    shell.signal = signal;
    spec.onExit?.();
    closeLog(shell);
    // Nothing left running: drop the exit listener (a long-lived host may run many sessions).
    if (![...table.shells.values()].some((s) => s.running)) {
      table.detach?.();
      table.detach = undefined;
    }
  });
  return shell;
}

function appendLog(shell: BackgroundShell, text: string): void {
  if (shell.logFd === null) return;
  const bytes = Buffer.from(text);
  const room = LOG_LIMIT - shell.logBytes;
  try {
    if (bytes.length <= room) {
      writeSync(shell.logFd, bytes);
      shell.logBytes += bytes.length;
      return;
    }
    writeSync(shell.logFd, bytes.subarray(0, Math.max(0, room)));
    writeSync(shell.logFd, `\n[log stopped at ${LOG_LIMIT} bytes]\n`);
  } catch {
    // A full disk stops the log, not the shell.
  }
  closeLog(shell);
}

function closeLog(shell: BackgroundShell): void {
  if (shell.logFd === null) return;
  try {
    closeSync(shell.logFd);
  } catch {
    // already closed
  }
  shell.logFd = null;
}

/** How long kill_shell waits for a killed shell's pipes to close before it reports. */
const KILL_SETTLE_MS = 5_000;

/**
 * Kills a shell's whole process group (and descendants that left it), and resolves once its process is
 * gone (or after a bound), so what is reported next (`[bash_1 killed]`) is already true.
 */
export function killShell(shell: BackgroundShell): Promise<void> {
  // What it left running after its first process ended (`cmd >/dev/null 2>&1 &`) goes too.
  shell.reap?.();
  if (!shell.running || shell.pid <= 0) return Promise.resolve();
  shell.killed = true;
  const closed = new Promise<void>((resolve) => {
    // Not unref'd: the shell's pipes are, so this timer keeps Keel alive until the close is seen.
    const timer = setTimeout(resolve, KILL_SETTLE_MS);
    shell.child.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const strays = descendants(shell.pid);
  for (const target of [-shell.pid, ...strays]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return closed;
}

export function killAll(table: ShellTable): void {
  // Runs in process 'exit' too, where nothing can be awaited: the signals are sent synchronously.
  for (const shell of table.shells.values()) void killShell(shell);
}

/** One line of state: running, exited with a code, or killed. */
export function shellStatus(shell: BackgroundShell): string {
  if (shell.running) return 'running';
  if (shell.killed) return 'killed';
  if (shell.signal) return `killed by ${shell.signal}`;
  return `exited with code ${shell.exitCode}`;
}

/** Takes the unread output (keeping only lines matching `filter`, when given). */
export function readOutput(shell: BackgroundShell, filter?: RegExp): { text: string; dropped: number } {
  let text = shell.unread;
  const dropped = shell.dropped;
  shell.unread = '';
  shell.dropped = 0;
  if (filter) {
    text = text
      .split('\n')
      .filter((line) => line && filter.test(line))
      .join('\n');
  }
  return { text, dropped };
}
