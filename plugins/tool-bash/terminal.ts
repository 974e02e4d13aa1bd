/**
 * The optional `terminal` service: a frontend that hosts Keel inside an editor (the `acp` plugin) offers it so
 * that `bash` runs in one of the editor's terminals, where the user watches it. The bash tool consults it after the
 * permission policy allowed the call and after the sandbox wrapped the command (the argv it gets is the confined
 * one); without it, or when `handles` says no for the session, bash runs as a child process of Keel.
 */
import { randomUUID } from 'node:crypto';
import type { Session } from '../../kernel/index.js';
import type { RunOutcome } from './run.js';

export interface TerminalRunSpec {
  session: Session;
  /** The `bash` call this run belongs to (a frontend shows the terminal in that call). */
  toolUseId: string;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Aborted when the turn is cancelled: the terminal's process is killed. */
  signal: AbortSignal;
  outputLimit: number;
}

export interface TerminalRunner {
  handles(session: Session): boolean;
  /** Runs the command to its end (or its timeout, or the abort); `fd3` is left empty. */
  run(spec: TerminalRunSpec): Promise<RunOutcome>;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** Runs bash commands in a host's terminal (see plugins/tool-bash/terminal.ts). */
    terminal: TerminalRunner;
  }
}

/**
 * The script for a terminal, which has no fd 3: the shell prints its final working directory after a marker line
 * on exit, and `splitMarker` takes it out of the output again.
 */
export function terminalScript(command: string): { script: string; marker: string } {
  const marker = `__keel_cwd_${randomUUID().replace(/-/g, '')}__`;
  return { script: `trap '{ printf "\\n%s%s\\n" "${marker}" "$(pwd -P)"; } 2>/dev/null' EXIT\nexec 2>&1\n${command}`, marker };
}

export function splitMarker(output: string, marker: string): { output: string; cwd: string } {
  const at = output.lastIndexOf(marker);
  if (at === -1) return { output, cwd: '' };
  const cwd = output.slice(at + marker.length).split('\n')[0]!.trim();
  return { output: output.slice(0, at).replace(/\n$/, ''), cwd };
}
