/**
 * `!cmd`: runs a shell command through the bash tool, under the same permission policy as the model's calls
 * (prePermission, then the user's answer), and shows its output. The conversation is not sent to the model.
 */
import { auxiliaryTurn, errorMessage, type Answer, type Kernel, type Question, type Session, type ToolResult, type UserShellService } from '../../kernel/index.js';

let counter = 0;

/** The `userShell` service both UIs (and any other frontend) run `!cmd` through. */
export function userShell(kernel: Kernel): UserShellService {
  return { run: (session, command, ask, signal) => runShell(kernel, session, command, ask, signal) };
}

export async function runShell(
  kernel: Kernel,
  session: Session,
  command: string,
  ask: (question: Question) => Promise<Answer>,
  signal: AbortSignal,
): Promise<ToolResult> {
  const tool = kernel.tools.get('bash');
  if (!tool) return { content: '!: this preset has no bash tool', isError: true };
  const call = { id: `toolu_shell_${process.pid}_${++counter}`, name: 'bash', input: { command } };
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) return { content: `!: ${errorMessage(parsed.error)}`, isError: true };
  const turn = auxiliaryTurn(kernel, session, signal);
  let decision = await kernel.hooks.prePermission.promise(call, turn).catch((err: unknown) => ({ behavior: 'deny' as const, reason: `permission check failed: ${errorMessage(err)}` }));
  decision ??= { behavior: 'deny', reason: 'no permission policy allowed bash' };
  if (decision.behavior === 'ask') {
    const answer = await ask({ kind: 'permission', call, tool, reason: decision.reason, preview: decision.preview, options: ['allow_once', 'allow_session', 'deny', 'deny_session'] });
    const choice = answer.kind === 'permission' ? answer.choice : 'deny';
    const allowed = choice === 'allow_once' || choice === 'allow_session';
    decision = allowed ? { behavior: 'allow' } : { behavior: 'deny', reason: 'Permission denied by the user' };
    kernel.emit({ type: 'permission', call, decision, source: 'user', choice });
  } else if (decision.behavior === 'deny') {
    kernel.emit({ type: 'permission', call, decision, source: 'policy' });
  }
  if (decision.behavior !== 'allow') return { content: decision.reason, isError: true, display: { denied: true } };
  const started = Date.now();
  kernel.emit({ type: 'tool_start', call, tool });
  let result: ToolResult;
  try {
    result =
      (await kernel.hooks.toolExecute.promise(call, turn)) ??
      (await tool.execute(parsed.data, { signal, session, turn, call, kernel, cwd: session.cwd, emit: (event) => kernel.emit(event) }));
  } catch (err) {
    result = { content: `Error: ${errorMessage(err)}`, isError: true };
  }
  kernel.emit({ type: 'tool_end', call, result, durationMs: Date.now() - started });
  return { ...result, display: { ...result.display, shown: true } };
}
