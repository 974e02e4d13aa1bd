/** Runs one hook command: `bash -c`, the event as JSON on stdin, its own process group, a timeout. */
import { spawn } from 'node:child_process';

export interface HookRun {
  command: string;
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** stdout parsed as a JSON object, when it is one. */
  json?: Record<string, unknown>;
}

const MAX_OUTPUT = 64 * 1024;

export function runHook(command: string, input: object, opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal }): Promise<HookRun> {
  return new Promise((resolve) => {
    // stdin is a socket pair, and bash sources ~/.bashrc for a "remote" shell (socket stdin, SHLVL < 1): a hook
    // must run the same whoever starts Keel, so it counts as a nested shell.
    const env = { ...opts.env, SHLVL: String(Math.max(1, Number(opts.env.SHLVL) || 0)) };
    const child = spawn('bash', ['-c', command], { cwd: opts.cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, opts.timeoutMs);
    opts.signal?.addEventListener('abort', kill, { once: true });
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < MAX_OUTPUT) stderr += d.toString('utf8');
    });
    // A hook that does not read its stdin must not fail the run.
    child.stdin.on('error', () => undefined);
    child.stdin.end(`${JSON.stringify(input)}\n`);
    const finish = (code: number | null) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', kill);
      let json: Record<string, unknown> | undefined;
      const trimmed = stdout.trim();
      if (trimmed.startsWith('{')) {
        try {
          const parsed = JSON.parse(trimmed) as unknown;
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
        } catch {
          // plain text output
        }
      }
      resolve({ command, code, stdout: stdout.slice(0, MAX_OUTPUT), stderr: stderr.slice(0, MAX_OUTPUT).trim(), timedOut, json });
    };
    child.on('error', (err) => {
      stderr += err.message;
      finish(null);
    });
    child.on('close', (code) => finish(timedOut ? null : code));
  });
}
