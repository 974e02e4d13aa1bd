/**
 * One tool call made for a command's expansion (`!`cmd``, `@path`), judged like the model's: prePermission,
 * then the user's answer for an `ask` (headless runs deny what they cannot ask), then the tool itself.
 */
import { auxiliaryTurn, errorMessage, type Kernel, type Session, type ToolResult } from '../../kernel/index.js';

let counter = 0;
const callId = () => `toolu_command_${process.pid}_${++counter}`;

export type Judged = { allowed: true } | { allowed: false; reason: string };

export async function judge(kernel: Kernel, session: Session, name: string, input: Record<string, unknown>, signal: AbortSignal, turn = auxiliaryTurn(kernel, session, signal), id = callId()): Promise<Judged> {
  const tool = kernel.tools.get(name);
  if (!tool) return { allowed: false, reason: `this preset has no ${name} tool` };
  const call = { id, name, input };
  let decision = await kernel.hooks.prePermission.promise(call, turn).catch((err: unknown) => ({ behavior: 'deny' as const, reason: `permission check failed: ${errorMessage(err)}` }));
  decision ??= { behavior: 'deny', reason: `no permission policy allowed ${name}` };
  if (decision.behavior === 'ask') {
    const options = ['allow_once', 'allow_session', 'deny', 'deny_session'] as const;
    const answer = await kernel.hooks.askUser.promise({ kind: 'permission', call, tool, reason: decision.reason, preview: decision.preview, options: [...options] }, turn).catch(() => undefined);
    const choice = answer?.kind === 'permission' ? answer.choice : 'deny';
    const allowed = choice === 'allow_once' || choice === 'allow_session';
    decision = allowed ? { behavior: 'allow' } : { behavior: 'deny', reason: `${decision.reason}; not allowed` };
    kernel.emit({ type: 'permission', call, decision, source: 'user', choice });
  } else if (decision.behavior === 'deny') {
    kernel.emit({ type: 'permission', call, decision, source: 'policy' });
  }
  return decision.behavior === 'allow' ? { allowed: true } : { allowed: false, reason: decision.reason };
}

/** Runs `command` with the bash tool after the policy (and the user) allowed it; returns its output. */
export async function runBash(kernel: Kernel, session: Session, command: string, signal: AbortSignal): Promise<ToolResult> {
  const tool = kernel.tools.get('bash');
  if (!tool) return { content: 'this preset has no bash tool', isError: true };
  const parsed = tool.input.safeParse({ command });
  if (!parsed.success) return { content: errorMessage(parsed.error), isError: true };
  const turn = auxiliaryTurn(kernel, session, signal);
  const call = { id: callId(), name: 'bash', input: parsed.data as Record<string, unknown> };
  // The same turn and call id, so the policy's re-check right before the run finds what it judged.
  const verdict = await judge(kernel, session, 'bash', call.input, signal, turn, call.id);
  if (!verdict.allowed) return { content: verdict.reason, isError: true };
  try {
    return (
      (await kernel.hooks.toolExecute.promise(call, turn)) ??
      (await tool.execute(parsed.data, { signal, session, turn, call, kernel, cwd: session.cwd, emit: (event) => kernel.emit(event) }))
    );
  } catch (err) {
    return { content: `Error: ${errorMessage(err)}`, isError: true };
  }
}
