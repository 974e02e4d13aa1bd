/**
 * Runs the status line command: at most once per `minIntervalMs`, never two at once (a request made while one
 * runs is served when it ends), killed after `timeoutMs`. The first line of its stdout is the status line.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface RunnerOptions {
  command: string;
  /** The JSON written to the command's stdin; called when a run starts. */
  input(): { cwd: string; json: string };
  /** The line to show; '' when the command failed, timed out or printed nothing. */
  show(line: string): void;
  /** Called with a one-line reason each time a run fails. */
  failed(reason: string): void;
  minIntervalMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

const MAX_OUTPUT = 64 * 1024;

/**
 * Keeps colours (SGR sequences, `ESC [ … m`) and drops every other escape sequence and control character, so a
 * command cannot move the cursor, clear the screen or retitle the terminal under the UI.
 */
export function sanitizeLine(text: string): string {
  const first = text.split('\n')[0]!.replace(/\r$/, '');
  return first
    .replace(/\x1b\[[0-9;:]*m|\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?/g, (seq) => (/^\x1b\[[0-9;:]*m$/.test(seq) ? seq : ''))
    .replace(/\t/g, ' ')
    .replace(/[\x00-\x08\x0a-\x1a\x1c-\x1f\x7f\x9b]/g, '');
}

export class StatusRunner {
  private child: ChildProcess | null = null;
  private timer: NodeJS.Timeout | null = null;
  private pending = false;
  private lastStart = -Infinity;
  private stopped = false;
  private readonly minInterval: number;
  private readonly timeout: number;
  private readonly now: () => number;

  constructor(private readonly opts: RunnerOptions) {
    this.minInterval = opts.minIntervalMs ?? 300;
    this.timeout = opts.timeoutMs ?? 2000;
    this.now = opts.now ?? Date.now;
  }

  /** Asks for a run: now, after the interval since the last start, or when the running one ends. */
  request(): void {
    if (this.stopped) return;
    this.pending = true;
    if (this.child || this.timer) return;
    const wait = this.lastStart + this.minInterval - this.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.request();
      }, wait);
      this.timer.unref();
      return;
    }
    this.start();
  }

  get running(): boolean {
    return this.child !== null;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.kill();
  }

  private kill(): void {
    const child = this.child;
    if (!child?.pid) return;
    try {
      // The command runs in its own process group: its children go with it.
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  private start(): void {
    this.pending = false;
    this.lastStart = this.now();
    let input: { cwd: string; json: string };
    try {
      input = this.opts.input();
    } catch (err) {
      this.opts.failed(`its input could not be built: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', this.opts.command], { cwd: input.cwd, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
    } catch (err) {
      this.opts.failed(`it could not start: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    this.child = child;
    let out = '';
    let timedOut = false;
    const killer = setTimeout(() => {
      timedOut = true;
      this.kill();
    }, this.timeout);
    killer.unref();
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      if (out.length < MAX_OUTPUT) out += chunk;
    });
    // A command that does not read its stdin must not fail the run with EPIPE.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input.json);
    let settled = false;
    const finish = (code: number | null, error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(killer);
      this.child = null;
      if (this.stopped) return;
      if (error) this.fail(`it could not start: ${error.message}`);
      else if (timedOut) this.fail(`it took longer than ${this.timeout} ms and was stopped`);
      else if (code !== 0) this.fail(`it exited with ${code === null ? 'a signal' : `code ${code}`}`);
      else this.opts.show(sanitizeLine(out));
      if (this.pending) this.request();
    };
    child.on('error', (err) => finish(null, err));
    child.on('close', (code) => finish(code));
  }

  private fail(reason: string): void {
    this.opts.show('');
    this.opts.failed(reason);
  }
}
