import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { definePlugin, defineTool, type Kernel, type Session, type ToolContext, type ToolResult } from '../../kernel/index.js';
import os from 'node:os';
import { runProcess, type RunOutcome } from './run.js';
import { userShell } from './user-shell.js';
import { splitMarker, terminalScript } from './terminal.js';
import { CappedOutput, stripAnsi } from './output.js';

export type { TerminalRunner, TerminalRunSpec } from './terminal.js';
import { existingShells, shellTable, startBackground } from './background.js';
import { BACKGROUND_TOOLS, bashesCommand, bashOutputTool, killShellTool } from './background-tools.js';
import { ProcessTag, settleStale } from './processes.js';
import { isScrubbed, scrubsCredentials } from './scrub.js';
import { hideFromEnvironBlock, type EnvironHideResult } from './environ-block.js';

/**
 * The \`processes\` service: what a plugin adds to the environment of a process it spawns so that the process,
 * and everything it starts (double-forked daemons included), ends with Keel; the MCP bridge uses it.
 */
export interface ProcessService {
  /** Variables for a spawned process's environment; \`name\` also tags it apart, for \`reap(name)\`. */
  env(name?: string): Record<string, string>;
  /** Kills every process started under \`name\` (or under this Keel), wherever it went; returns how many. */
  reap(name?: string): number;
  /**
   * Clears the credentials Keel reads itself (the names \`KEEL_SUBPROCESS_ENV_SCRUB\` keeps from commands) from this
   * process's environment block, \`/proc/<pid>/environ\`, keeping \`process.env\`: for a process whose children run
   * commands, such as a fleet worker. Done at apply already when scrubbing is on.
   */
  hideCredentials(): EnvironHideResult;
}

declare module '../../kernel/types.js' {
  interface Services {
    processes: ProcessService;
  }
}

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
  run_in_background: z.boolean().optional().describe('Start it and return its shell_id at once (servers, watchers); read it with bash_output, stop it with kill_shell'),
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
    if (scrubsCredentials(process.env)) hideScrubbedFromEnviron(kernel);
    kernel.services.provide('userShell', userShell(kernel));
    const outputLimit = opts.outputLimit ?? 30_000;
    const home = kernel.config.keelHome || undefined;
    const tag = new ProcessTag(home);
    // Survivors of an earlier Keel that was killed with SIGKILL end before this one starts anything.
    if (home) settleStale(home);
    const processes: ProcessService = {
      env: (name) => tag.env(name && tag.sub(name)),
      reap: (name) => tag.reap(name && tag.sub(name)),
      hideCredentials: () => hideFromEnvironBlock(isScrubbed),
    };
    kernel.services.provide('processes', processes);
    kernel.tools.register(
      defineTool({
        name: 'bash',
        description: `Run a bash command and get its output (stdout and stderr together, in order) and exit code. The working directory persists between calls, so cd carries over. There is no terminal and stdin is closed: use non-interactive flags (git commit -m, npm init -y; pagers are off). timeout in ms (default ${DEFAULT_TIMEOUT}, max ${MAX_TIMEOUT}); on timeout the command and its children are killed. Output over ${outputLimit} characters is cut in the middle. Quote paths with spaces. run_in_background: true starts a long-running command (dev server, watcher) and returns its shell_id at once. Prefer read_file, edit_file, glob and grep over cat, sed, find and grep.`,
        permission: 'execute',
        input,
        paths: (i) => (i.workdir ? [i.workdir] : []),
        execute: (args, ctx) => (args.run_in_background ? runInBackground(args, ctx, outputLimit, processes) : runBash(args, ctx, outputLimit, processes)),
      }),
    );
    kernel.tools.register(bashOutputTool);
    kernel.tools.register(killShellTool);
    kernel.commands.register(bashesCommand);
    kernel.hooks.selectTools.tapPromise('tool-bash', async (tools, turn) =>
      existingShells(turn.session).length > 0 ? tools : tools.filter((t) => !BACKGROUND_TOOLS.has(t.name)),
    );
  },
}));

/**
 * Scrubbing keeps Keel's credentials out of each command's environment; this keeps them out of Keel's own
 * environment block too, which a command can read as /proc/$PPID/environ. At every apply, before any command runs:
 * no state is kept between applies, so a binary restored from the start-up snapshot (whose build applied the plugins
 * in the builder's process) clears its own block when it applies them at run time. Once cleared, later applies (more
 * kernels in one process) find nothing left to clear.
 */
function hideScrubbedFromEnviron(kernel: Kernel): void {
  const result = hideFromEnvironBlock(isScrubbed);
  if (result.hidden.length) kernel.log('debug', `cleared ${result.hidden.join(', ')} from /proc/${process.pid}/environ`, 'tool-bash');
  if (result.reason) kernel.log(process.platform === 'linux' ? 'warn' : 'debug', `credentials stay readable in /proc/${process.pid}/environ: ${result.reason}`, 'tool-bash');
}

/** A background shell's own tag, so kill_shell ends what it started even after its first process ended. */
function nextShellTag(session: Session): string {
  return `${session.id}/bash_${shellTable(session).next}`;
}

/** The environment every bash command gets: the user's (less Keel's credentials when scrubbing), with pagers and editors that never wait. */
function shellEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  const scrub = scrubsCredentials(process.env);
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !(scrub && isScrubbed(key))) env[key] = value;
  return Object.assign(env, { GIT_PAGER: 'cat', PAGER: 'cat', GIT_EDITOR: 'true', GIT_TERMINAL_PROMPT: '0' });
}

async function runInBackground(args: z.infer<typeof input>, ctx: ToolContext, bufferLimit: number, processes: ProcessService): Promise<ToolResult> {
  const { session } = ctx;
  const state = shellState(session);
  const cwd = args.workdir ? path.resolve(state.cwd, args.workdir) : isDir(state.cwd) ? state.cwd : physical(session.cwd);
  if (!isDir(cwd)) return { content: `bash: workdir ${cwd} is not a folder.`, isError: true };
  const script = `exec 2>&1\n${args.command}`;
  const tagName = nextShellTag(session);
  const env = { ...shellEnv(), ...processes.env(tagName) };
  const wrapped = await ctx.kernel.services.get('sandbox')?.wrap({ command: script, cwd, session, env });
  const home = ctx.kernel.config.keelHome || path.join(os.tmpdir(), `keel-${process.getuid?.() ?? 'user'}`);
  const shell = startBackground({
    session,
    command: args.command,
    file: wrapped ? wrapped.file : 'bash',
    args: wrapped ? wrapped.args : ['-c', script],
    cwd,
    env,
    logDir: path.join(home, 'tool-outputs', session.id.replace(/[^\w.-]/g, '_'), 'background'),
    bufferLimit,
    reap: () => processes.reap(tagName),
    // The sandbox's snapshot of protected paths is compared and released when the shell ends, not at start.
    onExit: () => {
      void wrapped?.finish().then(
        (note) => note && ctx.kernel.log('warn', `background shell: ${note}`, 'tool-bash'),
        (err: unknown) => ctx.kernel.log('warn', `background shell: ${err instanceof Error ? err.message : String(err)}`, 'tool-bash'),
      );
    },
  });
  return {
    content: `Started in the background as ${shell.id} (pid ${shell.pid}) in ${cwd}. Read its output with bash_output (shell_id "${shell.id}"), stop it with kill_shell. It is killed when the session ends.`,
    display: { shellId: shell.id, pid: shell.pid, background: true },
  };
}

async function runBash(args: z.infer<typeof input>, ctx: ToolContext, outputLimit: number, processes: ProcessService): Promise<ToolResult> {
  const { session } = ctx;
  const state = shellState(session);
  const notes: string[] = [];
  if (!isDir(state.cwd)) {
    state.cwd = physical(session.cwd);
    notes.push(`The previous working directory no longer exists; the shell is back in ${state.cwd}.`);
  }
  const cwd = args.workdir ? path.resolve(state.cwd, args.workdir) : state.cwd;
  if (!isDir(cwd)) return { content: `bash: workdir ${cwd} is not a folder.`, isError: true };

  const terminal = ctx.kernel.services.get('terminal');
  const inTerminal = terminal?.handles(session) ? terminalScript(args.command) : undefined;
  const script = inTerminal ? inTerminal.script : shellScript(args.command);
  const callTag = `${session.id}/${ctx.call.id}`;
  const env = { ...shellEnv(), ...processes.env(callTag) };
  const wrapped = await ctx.kernel.services.get('sandbox')?.wrap({ command: script, cwd, session, env });
  const timeoutMs = args.timeout ?? DEFAULT_TIMEOUT;
  let sandboxNote: string | undefined;
  let outcome: RunOutcome;
  try {
    const file = wrapped ? wrapped.file : 'bash';
    const argv = wrapped ? wrapped.args : ['-c', script];
    if (inTerminal && terminal) {
      const ran = await terminal.run({ session, toolUseId: ctx.call.id, file, args: argv, cwd, env, timeoutMs, signal: ctx.signal, outputLimit });
      const split = splitMarker(ran.output, inTerminal.marker);
      // The terminal keeps the tail it was given room for; the model gets head and tail within the limit, as here.
      const capped = new CappedOutput(outputLimit);
      capped.count(Buffer.byteLength(split.output));
      capped.push(stripAnsi(split.output));
      outcome = { ...ran, output: capped.text(), truncated: ran.truncated || capped.truncated, fd3: split.cwd };
    } else {
      outcome = await runProcess({
        file,
        args: argv,
        cwd,
        env,
        timeoutMs,
        signal: ctx.signal,
        outputLimit,
        onOutput: (chunk, stream) => ctx.emit({ type: 'tool_output', id: ctx.call.id, chunk, stream }),
        // On timeout or interrupt, what the command started goes too, wherever it went (setsid, double fork).
        reap: () => processes.reap(callTag),
      });
    }
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
