import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { definePlugin, defineTool, type Session, type ToolContext, type ToolResult } from '../../kernel/index.js';
import { runProcess, type RunOutcome } from './run.js';

export interface ToolBashOptions {
  /** Characters of output the model sees at most (the middle is cut). Default 30 000. */
  outputLimit?: number;
}

const DEFAULT_TIMEOUT = 30_000;
const MAX_TIMEOUT = 600_000;
const KEY = 'tool-bash';

const input = z.object({
  command: z.string().min(1).describe('The bash command line'),
  timeout: z.number().int().min(1).max(MAX_TIMEOUT).optional().describe(`Milliseconds (default ${DEFAULT_TIMEOUT}, max ${MAX_TIMEOUT})`),
  workdir: z.string().optional().describe('Run this one command here instead of the current directory'),
});

interface ShellState {
  cwd: string;
}

/** The shell reports physical paths (`pwd -P`), so compare against physical paths too. */
function physical(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function shellState(session: Session): ShellState {
  let state = session.data.get(KEY) as ShellState | undefined;
  if (!state) {
    state = { cwd: physical(session.cwd) };
    session.data.set(KEY, state);
  }
  return state;
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/**
 * The script bash runs: stderr joins stdout (one stream keeps the real order), and on exit the shell reports
 * its working directory on fd 3, so a `cd` carries over to the next call.
 */
export function shellScript(command: string): string {
  return `trap '{ pwd -P >&3; } 2>/dev/null' EXIT\nexec 2>&1\n${command}`;
}

/** The bash tool: one command per call, in a shell whose working directory persists for the session. */
export default definePlugin((opts: ToolBashOptions = {}) => ({
  name: 'tool-bash',
  kernel: '^1.0.0',
  apply(kernel) {
    const outputLimit = opts.outputLimit ?? 30_000;
    kernel.tools.register(
      defineTool({
        name: 'bash',
        description: `Run a bash command and get its output (stdout and stderr together, in order) and exit code. The working directory persists between calls, so cd carries over. There is no terminal and stdin is closed: use non-interactive flags (git commit -m, npm init -y; pagers are off). timeout in ms (default ${DEFAULT_TIMEOUT}, max ${MAX_TIMEOUT}); on timeout the command and its children are killed. Output over ${outputLimit} characters is cut in the middle. Quote paths with spaces. Prefer read_file, edit_file, glob and grep over cat, sed, find and grep.`,
        permission: 'execute',
        input,
        paths: (i) => (i.workdir ? [i.workdir] : []),
        execute: (args, ctx) => runBash(args, ctx, outputLimit),
      }),
    );
  },
}));

async function runBash(args: z.infer<typeof input>, ctx: ToolContext, outputLimit: number): Promise<ToolResult> {
  const { session } = ctx;
  const state = shellState(session);
  const notes: string[] = [];
  if (!isDir(state.cwd)) {
    state.cwd = physical(session.cwd);
    notes.push(`The previous working directory no longer exists; the shell is back in ${state.cwd}.`);
  }
  const cwd = args.workdir ? path.resolve(state.cwd, args.workdir) : state.cwd;
  if (!isDir(cwd)) return { content: `bash: workdir ${cwd} is not a folder.`, isError: true };

  const script = shellScript(args.command);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  Object.assign(env, { GIT_PAGER: 'cat', PAGER: 'cat', GIT_EDITOR: 'true', GIT_TERMINAL_PROMPT: '0' });
  const wrapped = await ctx.kernel.services.get('sandbox')?.wrap({ command: script, cwd, session, env });
  const timeoutMs = args.timeout ?? DEFAULT_TIMEOUT;
  let sandboxNote: string | undefined;
  let outcome: RunOutcome;
  try {
    outcome = await runProcess({
      file: wrapped ? wrapped.file : 'bash',
      args: wrapped ? wrapped.args : ['-c', script],
      cwd,
      env,
      timeoutMs,
      signal: ctx.signal,
      outputLimit,
      onOutput: (chunk, stream) => ctx.emit({ type: 'tool_output', id: ctx.call.id, chunk, stream }),
    });
  } finally {
    // The sandbox puts back protected paths the command touched; its note goes last, where the model reads it.
    const reverted = await wrapped?.finish();
    if (reverted) sandboxNote = reverted;
  }

  const finalCwd = outcome.fd3.trim().split('\n').pop() ?? '';
  if (!args.workdir && finalCwd && path.isAbsolute(finalCwd) && finalCwd !== state.cwd) {
    state.cwd = finalCwd;
    const root = physical(session.projectRoot);
    const rel = path.relative(root, finalCwd);
    const outside = rel.startsWith('..') || path.isAbsolute(rel);
    notes.push(outside ? `The shell's working directory is now ${finalCwd}, outside the project root ${root}.` : `The shell's working directory is now ${finalCwd}.`);
  }

  if (sandboxNote) notes.push(sandboxNote);
  const body = outcome.output.trimEnd() || '(no output)';
  const display = { exitCode: outcome.exitCode, cwd: state.cwd, timedOut: outcome.timedOut, truncated: outcome.truncated };
  const after = notes.length ? `\n${notes.join('\n')}` : '';
  if (outcome.timedOut) {
    return { content: `${body}\n\nCommand timed out after ${timeoutMs} ms; it and its child processes were killed.${after}`, isError: true, display };
  }
  if (outcome.aborted) return { content: `${body}\n\nCommand interrupted by the user; it and its child processes were killed.${after}`, isError: true, display };
  const status = outcome.exitCode === 0 ? [] : [outcome.signal ? `Killed by ${outcome.signal}.` : `Exit code: ${outcome.exitCode}`];
  return { content: [body, ...status, ...notes].join('\n'), display, ...(sandboxNote ? { isError: true } : {}) };
}
