/**
 * The stdio transport: the server runs in its own process group (so the whole group can be killed, `npx` and
 * all), its stderr goes to a capped log file (stderr-log.ts), and anything on stdout that is not JSON-RPC closes
 * the connection — except a few lines before the server's first message (a start-up banner), which are noted in
 * the log and skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { StderrLog } from './stderr-log.js';

/** Process groups still running, killed when Keel exits (on any path, including signals). */
const liveGroups = new Set<number>();
// 'exit' handlers cannot wait, so the groups get SIGKILL: nothing a server started may outlive Keel.
const killLiveGroups = () => {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
};

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Looked up on `process`, not kept in a module flag: a flag restored from the binary's start-up snapshot would
 * say "installed" in a process that never installed the hook, and the servers would outlive Keel.
 */
function installExitHook(): void {
  if (!process.listeners('exit').includes(killLiveGroups)) process.on('exit', killLiveGroups);
}

/** Lines on stdout before the first JSON-RPC message that are taken for a banner and skipped. */
const MAX_BANNER_LINES = 20;
/** How long a write that found the pipe broken waits for the server's exit, which says why. */
const EXIT_WAIT_MS = 2_000;

const isBrokenPipe = (err: Error & { code?: string }) => err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED' || err.code === 'ECONNRESET';

/** Variables a server inherits from Keel's environment; the rest (API keys included) it gets only from `env`. */
const INHERITED_ENV = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ', 'NODE_EXTRA_CA_CERTS', 'SystemRoot'];

export interface StdioSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Where the server's stderr is appended. */
  logFile: string;
  /** Bytes of that log before it is rotated (stderr-log.ts). */
  maxLogBytes: number;
  /** Largest single message accepted from the server, in bytes. */
  maxMessageBytes: number;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private child?: ChildProcess;
  private readonly buffer: ReadBuffer;
  private closed = false;
  private log?: StderrLog;
  /** Whether a JSON-RPC message came yet; until then a line that is not one is a banner. */
  private heard = false;
  private bannerLines = 0;
  /** How the server ended, once its process closed; and who waits to hear it. */
  private exited?: Error;
  private readonly exitWaiters: Array<(exit: Error) => void> = [];

  constructor(private readonly spec: StdioSpec) {
    this.buffer = new ReadBuffer({ maxBufferSize: spec.maxMessageBytes });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    installExitHook();
    mkdirSync(path.dirname(this.spec.logFile), { recursive: true, mode: 0o700 });
    const log = new StderrLog(this.spec.logFile, this.spec.maxLogBytes);
    this.log = log;
    const env: Record<string, string> = {};
    for (const key of INHERITED_ENV) if (process.env[key] !== undefined) env[key] = process.env[key]!;
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(this.spec.command, this.spec.args, {
          cwd: this.spec.cwd,
          env: { ...env, ...this.spec.env },
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
        });
      } catch (err) {
        log.close();
        reject(err);
        return;
      }
      this.child = child;
      // Read (and capped) by Keel rather than handed over as a file, so a flooding server cannot fill the disk.
      child.stderr!.on('data', (chunk: Buffer) => log.write(chunk));
      child.stderr!.once('close', () => log.close());
      (child.stderr as unknown as { unref?: () => void }).unref?.();
      // The server never keeps Keel alive: Keel's exit kills its group.
      child.unref();
      (child.stdin as unknown as { unref?: () => void }).unref?.();
      (child.stdout as unknown as { unref?: () => void }).unref?.();
      child.once('error', (err) => {
        reject(err);
        this.fail(err);
      });
      child.once('spawn', () => {
        if (child.pid) liveGroups.add(child.pid);
        resolve();
      });
      child.once('close', (code, signal) => {
        if (child.pid) {
          // Whatever the server started in its group goes with it.
          killGroup(child.pid, 'SIGKILL');
          liveGroups.delete(child.pid);
        }
        const said = log.lastLine;
        const exit = new Error(`the server exited (${signal ? `signal ${signal}` : `code ${code}`})${said ? `; its last line on stderr: ${said}` : ''}`);
        this.exited = exit;
        for (const waiter of this.exitWaiters.splice(0)) waiter(exit);
        if (!this.closed) this.onerror?.(exit);
        this.finish();
      });
      // A server that died makes writes fail with EPIPE before its exit is seen: the exit (code, last stderr line) says why.
      child.stdin!.on('error', (err) => {
        if (!isBrokenPipe(err)) this.onerror?.(err);
      });
      child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
    });
  }

  private receive(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (err) {
      this.fail(new Error(`the server sent something that is not a JSON-RPC message on stdout (${(err as Error).message.split('\n')[0]})`));
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        // A line that does not parse has been taken out of the buffer already.
        message = this.buffer.readMessage();
      } catch (err) {
        const why = (err as Error).message.split('\n')[0];
        if (!this.heard && this.bannerLines < MAX_BANNER_LINES) {
          this.bannerLines++;
          this.log?.note(`skipped a line on stdout that is not JSON-RPC, before the server's first message (${why})`);
          continue;
        }
        this.fail(new Error(`the server sent something that is not a JSON-RPC message on stdout (${why})`));
        return;
      }
      if (message === null) break;
      this.heard = true;
      try {
        this.onmessage?.(message);
      } catch (err) {
        this.fail(err instanceof Error ? err : new Error(String(err)));
        return;
      }
    }
  }

  private fail(error: Error): void {
    this.onerror?.(error);
    void this.close();
  }

  private finish(): void {
    if (this.closed && !this.child) return;
    this.closed = true;
    this.child = undefined;
    this.buffer.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed) return Promise.reject(new Error('not connected'));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (err) => {
        if (!err) return resolve();
        if (!isBrokenPipe(err)) return reject(err);
        void this.exitOr(err).then(reject);
      });
    });
  }

  /** Why the server went: its exit once seen (waiting up to EXIT_WAIT_MS for it), else `fallback`. */
  private exitOr(fallback: Error): Promise<Error> {
    if (this.exited) return Promise.resolve(this.exited);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.exited ?? fallback), EXIT_WAIT_MS);
      timer.unref();
      this.exitWaiters.push((exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
  }

  /** Closes stdin, then SIGTERM and SIGKILL to the group if it lingers. */
  async close(): Promise<void> {
    const child = this.child;
    this.closed = true;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      this.finish();
      return;
    }
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const wait = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    child.stdin?.end();
    if (!(await wait(500)) && child.pid) {
      killGroup(child.pid, 'SIGTERM');
      if (!(await wait(2000))) killGroup(child.pid, 'SIGKILL');
    }
    await wait(2000);
    if (child.pid) liveGroups.delete(child.pid);
    this.finish();
  }
}
