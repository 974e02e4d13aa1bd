/**
 * Every file /rewind writes or removes is judged by the permission policy as the write_file call that would do
 * it: deny rules refuse it, and protected paths, hard links and paths outside the project are asked about (and
 * refused where nobody can be asked). /rewind is the user's own command, so the permission mode's answer for a
 * plain write inside the project is taken as given: it is judged as edits mode would (auto stays auto).
 */
import { randomBytes } from 'node:crypto';
import { auxiliaryTurn, errorMessage, type Decision, type Kernel, type Session, type ToolCall, type Turn } from '../../kernel/index.js';
import { shownPath, type Action } from './rewind.js';

export async function judgeByPolicy(kernel: Kernel, session: Session, file: string, action: Action, signal: AbortSignal): Promise<string | undefined> {
  const tool = kernel.tools.get('write_file');
  if (!tool) return 'there is no write_file tool to judge the write as, so it is refused';
  const judged: Session = { ...session, permissionMode: session.permissionMode === 'auto' ? 'auto' : 'edits' };
  const turn = auxiliaryTurn(kernel, judged, signal);
  const content = action.kind === 'restore' ? action.content!.toString('utf8') : '';
  // A deny rule written for edit_file ("Edit(src/**)") refuses a restore as well; its asks are the write's own.
  if (kernel.tools.get('edit_file')) {
    const edit = { id: `rewind-${randomBytes(6).toString('hex')}`, name: 'edit_file', input: { path: file, old_string: '', new_string: content } };
    const verdict = await decide(kernel, edit, turn);
    if (verdict.behavior === 'deny') return verdict.reason.replace(/^Permission denied: /, '');
  }
  const call = { id: `rewind-${randomBytes(6).toString('hex')}`, name: 'write_file', input: { path: file, content } };
  const decision = await decide(kernel, call, turn);
  if (decision.behavior === 'allow') return undefined;
  if (decision.behavior === 'deny') return decision.reason.replace(/^Permission denied: /, '');
  const verb = action.kind === 'restore' ? 'restore' : 'remove';
  const reason = `/rewind would ${verb} ${shownPath(file, session.cwd)}: ${decision.reason}`;
  let answer;
  try {
    answer = await kernel.hooks.askUser.promise({ kind: 'permission', call, tool, reason, preview: decision.preview, options: ['allow_once', 'deny'] }, turn);
  } catch (err) {
    kernel.log('error', `asking the user failed: ${errorMessage(err)}`, 'checkpoints');
  }
  if (!answer || answer.kind !== 'permission') return `${decision.reason}, and nobody could be asked to approve it`;
  if (answer.choice === 'allow_once' || answer.choice === 'allow_session') return undefined;
  return `the user refused it${answer.message ? ` (${answer.message})` : ''}`;
}

/** prePermission's decision, failing closed: an error or no decision is a denial. */
async function decide(kernel: Kernel, call: ToolCall, turn: Turn): Promise<Decision> {
  try {
    return (await kernel.hooks.prePermission.promise(call, turn)) ?? { behavior: 'deny', reason: 'no permission policy allowed it' };
  } catch (err) {
    return { behavior: 'deny', reason: `the permission check failed (${errorMessage(err)})` };
  }
}
