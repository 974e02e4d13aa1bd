/**
 * `!cmd`: the user's own shell command. The user typed it, so it runs without a permission question (as in
 * Claude Code; the sandbox, when on, still confines it, since the bash tool asks it before spawning), its output
 * is shown like a tool call's, and the command with its output joins the conversation as a user message
 * (`<bash-input>` / `<bash-stdout>`), so the model sees it with the next prompt. Nothing is sent now.
 */
import { auxiliaryTurn, errorMessage, type Answer, type Kernel, type MessageParam, type Question, type Services, type Session, type ToolResult } from '../../kernel/index.js';

declare module '../../kernel/types.js' {
  interface Services {
    /** The user's own `!command`, run through the bash tool unasked and added to the conversation. */
    userShell: {
      /** Runs `command` as the bash tool would, without asking (the user typed it); its output joins the conversation. */
      run(session: Session, command: string, ask: (question: Question) => Promise<Answer>, signal: AbortSignal): Promise<ToolResult>;
    };
  }
}

let counter = 0;

/** The `userShell` service both UIs (and any other frontend) run `!cmd` through. */
export function userShell(kernel: Kernel): Services['userShell'] {
  return { run: (session, command, ask, signal) => runShell(kernel, session, command, ask, signal) };
}

/** The text of a result's content. */
function resultText(result: ToolResult): string {
  if (typeof result.content === 'string') return result.content;
  return result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

/** What the model is told the user ran: Claude Code's tags, so a model trained on them reads them alike. */
export function shellMessage(command: string, result: ToolResult): MessageParam {
  const output = resultText(result);
  const tag = result.isError ? 'bash-stderr' : 'bash-stdout';
  return { role: 'user', content: [{ type: 'text', text: `<bash-input>${command}</bash-input>` }, { type: 'text', text: `<${tag}>${output}</${tag}>` }] };
}

export async function runShell(
  kernel: Kernel,
  session: Session,
  command: string,
  // The user's own command asks nothing; kept for the service's signature.
  _ask: (question: Question) => Promise<Answer>,
  signal: AbortSignal,
): Promise<ToolResult> {
  const tool = kernel.tools.get('bash');
  if (!tool) return { content: '!: this preset has no bash tool', isError: true };
  const call = { id: `toolu_shell_${process.pid}_${++counter}`, name: 'bash', input: { command } };
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) return { content: `!: ${errorMessage(parsed.error)}`, isError: true };
  const turn = auxiliaryTurn(kernel, session, signal);
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
  if (!signal.aborted) {
    // Into the conversation (and the session file, which follows user_message events).
    const message = shellMessage(command, result);
    session.messages.push(message);
    kernel.state.set({ messages: session.messages.slice() });
    kernel.emit({ type: 'user_message', message });
  }
  return { ...result, display: { ...result.display, shown: true } };
}
