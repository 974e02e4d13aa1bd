import { readdirSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { CappedOutput, LineSplitter, stripAnsi } from './output.js';

export interface RunSpec {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
  outputLimit: number;
  onOutput(chunk: string, stream: 'stdout' | 'stderr'): void;
  /** Kills, synchronously, every process the command started wherever it went (see processes.ts). */
  reap?(): void;
}

export interface RunOutcome {
  output: string;
  truncated: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** What the shell wrote to fd 3 (its final working directory). */
  fd3: string;
}

/** How long to wait for pipes after the shell exits, when a background child still holds them open. */
const DRAIN_MS = 250;

/** Every descendant of `pid`, from /proc (Linux); empty where /proc does not list children. */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const parent = pending.pop()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const id of children.split(' ').filter(Boolean).map(Number)) {
        found.push(id);
        pending.push(id);
      }
    }
  }
  return found;
}

/** Waits (at most two seconds) until none of `pids` is alive any more (zombies count as gone). */
async function gone(pids: number[]): Promise<void> {
  const alive = (pid: number) => {
    try {
      return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  for (let waited = 0; waited < 2000 && pids.some(alive); waited += 20) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Runs a process as the leader of its own process group, with stdin closed. On timeout or abort the whole
 * group is killed, so grandchildren die with it, and so do descendants that started a session of their own.
 */
export function runProcess(spec: RunSpec): Promise<RunOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(spec.file, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const output = new CappedOutput(spec.outputLimit);
    let fd3 = '';
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

    const killed: number[] = [];
    const killGroup = () => {
      if (child.pid === undefined) return;
      // Children that left the group (setsid) are found through /proc before the group dies and orphans them.
      const strays = descendants(child.pid);
      killed.push(...strays);
      for (const target of [-child.pid, ...strays]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      spec.reap?.();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    if (spec.signal.aborted) onAbort();
    else spec.signal.addEventListener('abort', onAbort, { once: true });

    const splitters = (['stdout', 'stderr'] as const).map((stream) => {
      const splitter = new LineSplitter((text) => {
        const clean = stripAnsi(text);
        output.push(clean);
        spec.onOutput(clean, stream);
      });
      child[stream]?.on('data', (chunk: Buffer) => {
        output.count(chunk.length);
        splitter.write(chunk);
      });
      return splitter;
    });
    const extra = child.stdio[3];
    extra?.on('data', (chunk: Buffer) => (fd3 += chunk.toString()));
    extra?.on('error', () => undefined);

    const finish = async () => {
      if (settled) return;
      settled = true;
      // A killed process may still be finishing a write; whoever looks at the disk next must see the end state.
      await gone(killed);
      clearTimeout(timer);
      spec.signal.removeEventListener('abort', onAbort);
      for (const splitter of splitters) splitter.end();
      for (const stream of [child.stdout, child.stderr, extra]) stream?.destroy();
      resolve({
        output: output.text(),
        truncated: output.truncated,
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        timedOut,
        aborted,
        fd3,
      });
    };
    child.on('error', (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      spec.signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Normally 'close' follows at once; a backgrounded grandchild may keep the pipes open for good.
      setTimeout(() => void finish(), DRAIN_MS).unref();
    });
    child.on('close', (code, signal) => {
      exit ??= { code, signal };
      void finish();
    });
  });
}
