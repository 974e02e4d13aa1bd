/** bash_output, kill_shell and /bashes: what the model and the user do with background shells. */
import { z } from 'zod';
import { defineTool, type CommandDefinition, type Session, type ToolDefinition } from '../../kernel/index.js';
import { settleStale } from './processes.js';
import { existingShells, killShell, readOutput, shellStatus, shellTable, type BackgroundShell } from './background.js';

const outputInput = z.object({
  shell_id: z.string().min(1).describe('The id run_in_background returned, e.g. bash_1'),
  filter: z.string().optional().describe('A regular expression: only output lines matching it are returned (the rest are still consumed)'),
});

const killInput = z.object({
  shell_id: z.string().min(1).describe('The id run_in_background returned, e.g. bash_1'),
});

function find(session: Session, id: string): BackgroundShell | string {
  const shell = shellTable(session).shells.get(id);
  if (shell) return shell;
  const known = existingShells(session).map((s) => s.id);
  return `No background shell "${id}" in this session${known.length ? ` (known: ${known.join(', ')})` : ''}.`;
}

/** bash_output and kill_shell are sent only once the session has a background shell. */
export const BACKGROUND_TOOLS = new Set(['bash_output', 'kill_shell']);

export const bashOutputTool: ToolDefinition<z.infer<typeof outputInput>> = defineTool({
  name: 'bash_output',
  description:
    'Read the output a background shell (bash with run_in_background) printed since the last read, and whether it is still running (with its exit code once done). filter keeps only lines matching a regular expression.',
  permission: 'read',
  input: outputInput,
  async execute(args, ctx) {
    const shell = find(ctx.session, args.shell_id);
    if (typeof shell === 'string') return { content: shell, isError: true };
    let filter: RegExp | undefined;
    if (args.filter !== undefined) {
      try {
        filter = new RegExp(args.filter);
      } catch (err) {
        return { content: `bash_output: filter is not a valid regular expression: ${(err as Error).message}`, isError: true };
      }
    }
    const { text, dropped } = readOutput(shell, filter);
    const parts = [text.trimEnd() || '(no new output)'];
    if (dropped > 0) parts.push(`[${dropped} earlier characters did not fit in the buffer and were dropped from this read; the whole output is in ${shell.logFile}]`);
    parts.push(`[${shell.id} ${shellStatus(shell)}]`);
    return { content: parts.join('\n'), display: { shellId: shell.id, status: shellStatus(shell), exitCode: shell.exitCode, running: shell.running } };
  },
});

export const killShellTool: ToolDefinition<z.infer<typeof killInput>> = defineTool({
  name: 'kill_shell',
  description: 'Stop a background shell (bash with run_in_background) and every process it started.',
  permission: 'read',
  input: killInput,
  async execute(args, ctx) {
    const shell = find(ctx.session, args.shell_id);
    if (typeof shell === 'string') return { content: shell, isError: true };
    if (!shell.running) {
      // Its first process ended, but what it put in the background (`cmd >/dev/null 2>&1 &`) may still run.
      const left = shell.reap?.() ?? 0;
      return { content: `${shell.id} is no longer running (${shellStatus(shell)})${left ? `; killed ${left} process(es) it had left running` : ''}.` };
    }
    await killShell(shell);
    return { content: `Killed ${shell.id} (${shell.command}) and its child processes.`, display: { shellId: shell.id } };
  },
});

function age(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${s % 60}s` : `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

export const bashesCommand: CommandDefinition = {
  name: 'bashes',
  description: 'list background shells (id, state, pid, age, command); /bashes kill <id> stops one',
  async run(args, ctx) {
    const words = args.split(/\s+/).filter(Boolean);
    if (words[0] === 'kill') {
      if (!words[1]) throw new Error('usage: /bashes kill <id>');
      const shell = find(ctx.session, words[1]);
      if (typeof shell === 'string') throw new Error(shell);
      await killShell(shell);
      return `Killed ${shell.id}.`;
    }
    if (words.length > 0) throw new Error(`unknown argument "${words[0]}" (usage: /bashes, or /bashes kill <id>)`);
    // Survivors of a Keel killed with SIGKILL end here too, as at start-up.
    const stale = ctx.kernel.config.keelHome ? settleStale(ctx.kernel.config.keelHome) : 0;
    const note = stale ? `Killed ${stale} process(es) left running by an earlier Keel that was killed.\n` : '';
    const shells = existingShells(ctx.session);
    if (shells.length === 0) return `${note}No background shells in this session.`;
    const now = Date.now();
    return note + shells.map((s) => `${s.id}  ${shellStatus(s).padEnd(18)}  pid ${s.pid}  ${age(now - s.startedAt).padStart(6)}  ${s.command}`).join('\n');
  },
};
