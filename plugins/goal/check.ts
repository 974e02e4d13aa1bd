/** Runs `--goal-check`'s command as the model's bash calls run: judged by the permission policy, then the bash tool (sandboxed when the sandbox is on). */
import type { ToolCall, Turn } from '../../kernel/index.js';

export type CheckOutcome = { ran: true; exitCode: number | null; output: string } | { ran: false; why: string };

export async function runCheck(turn: Turn, command: string): Promise<CheckOutcome> {
  const { kernel } = turn;
  const tool = kernel.tools.get('bash');
  if (!tool) return { ran: false, why: 'no bash tool is registered (plugin tool-bash)' };
  const call: ToolCall = { id: `goal_check_${turn.index}`, name: 'bash', input: { command } };
  const decision = await kernel.hooks.prePermission.promise(call, turn).catch((err: unknown) => ({ behavior: 'deny' as const, reason: String(err) }));
  if (!decision || decision.behavior !== 'allow') {
    const reason = decision && 'reason' in decision && decision.reason ? decision.reason : 'no permission policy allowed it';
    return { ran: false, why: `the permission policy did not allow it (${reason}); allow it with --allowedTools "Bash(${command})"` };
  }
  const result =
    (await kernel.hooks.toolExecute.promise(call, turn)) ??
    (await tool.execute(tool.input.parse(call.input), { signal: turn.signal, session: turn.session, turn, call, kernel, cwd: turn.session.cwd, emit: (e) => kernel.emit(e) }));
  const exitCode = typeof result.display?.exitCode === 'number' ? result.display.exitCode : result.isError ? 1 : null;
  const output = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  return { ran: true, exitCode, output: output.slice(-4000) };
}
