/**
 * One ACP session: a Keel session on a kernel of its own, the editor as its host. Prompts run the agent loop;
 * the kernel's events become `session/update` notifications; questions become `session/request_permission`.
 */
import {
  RequestError,
  type AgentContext,
  type ClientCapabilities,
  type PermissionOption,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
} from '@agentclientprotocol/sdk';
import {
  errorMessage,
  findSlashCommand,
  normalizePermissionMode,
  runAgent,
  runSlashCommand,
  type AgentEvent,
  type Answer,
  type ContentBlockParam,
  type Kernel,
  type PermissionChoice,
  type PermissionMode,
  type Question,
  type Session,
  type ToolCall,
  type Turn,
} from '../../kernel/index.js';
import { HOST_KEY, type AcpHost, type TerminalOutcome, type TerminalRun } from './host.js';
import { fence, kindOf, locationsOf, resultContent, titleOf } from './updates.js';
import { toPlan } from './plan.js';

/** Keel's permission modes, as the session modes an editor offers. */
export const MODES: Array<{ id: PermissionMode; name: string; description: string }> = [
  { id: 'ask', name: 'Ask', description: 'Reads run; edits, commands and network calls ask first' },
  { id: 'edits', name: 'Edits', description: 'Reads and file edits in the project run; commands ask first' },
  { id: 'auto', name: 'Auto', description: 'Everything the rules do not deny runs without asking' },
  { id: 'manual', name: 'Manual', description: 'Every tool call asks first' },
  { id: 'plan', name: 'Plan', description: 'Only reads run, until you approve a plan' },
];

const OPTION: Record<PermissionChoice, PermissionOption> = {
  allow_once: { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
  allow_session: { optionId: 'allow_always', name: 'Always allow (this session)', kind: 'allow_always' },
  deny: { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  deny_session: { optionId: 'reject_always', name: 'Always reject (this session)', kind: 'reject_always' },
};
/** An "always" answer covers every later call of the tool, not the command shown: its label says so. */
function optionName(choice: PermissionChoice, tool: string): string {
  if (choice === 'allow_session') return `Always allow every ${tool} call (this session)`;
  if (choice === 'deny_session') return `Always reject every ${tool} call (this session)`;
  return OPTION[choice].name;
}
const CHOICE_OF: Record<string, PermissionChoice> = { allow_once: 'allow_once', allow_always: 'allow_session', reject_once: 'deny', reject_always: 'deny_session' };
/** Output of a running command shown in its tool call, at most (the tail is kept). */
const LIVE_OUTPUT_CHARS = 20_000;

export class AcpSession implements AcpHost {
  private running: { controller: AbortController; done: Promise<unknown> } | undefined;
  /** Tool calls already announced with `tool_call` (a permission question may announce one before it starts). */
  private announced = new Set<string>();
  private output = new Map<string, string>();
  private terminals = new Map<string, string>();
  private stopObserving: () => void;
  private commandsSent = '';

  constructor(
    readonly id: string,
    readonly kernel: Kernel,
    readonly session: Session,
    private readonly client: AgentContext,
    private readonly caps: ClientCapabilities,
    /** False once the connection is going away: updates that can no longer be sent are not worth a log line. */
    private readonly connected: () => boolean = () => true,
  ) {
    session.data.set(HOST_KEY, this);
    this.stopObserving = kernel.observe((event) => this.onEvent(event));
    // A session resumed in auto mode where managed settings forbid it is shown as what it runs in: ask.
    if (this.bypassOff() && session.permissionMode === 'auto') session.permissionMode = 'ask';
  }

  /** The managed settings file that disables auto (bypassPermissions) mode, if one does. */
  private bypassOff(): string | undefined {
    return this.kernel.config.managed?.disableBypassPermissionsMode;
  }

  /** The modes as `session/new` returns them: auto only where managed settings allow it. */
  modes() {
    const off = this.bypassOff();
    return { currentModeId: this.session.permissionMode, availableModes: MODES.filter((m) => !(off && m.id === 'auto')).map((m) => ({ ...m })) };
  }

  /** What an editor shows once a session is open: its slash commands, its mode, its plan. */
  announce(): void {
    this.sendCommands();
    this.send({ sessionUpdate: 'current_mode_update', currentModeId: this.session.permissionMode });
    const todos = this.kernel.state.get().todos;
    if (todos.length) this.send({ sessionUpdate: 'plan', ...toPlan(todos) });
  }

  /** The slash commands, when they differ from what the editor last got (MCP prompts arrive as servers connect). */
  private sendCommands(): void {
    const availableCommands = this.kernel.commands.list().map((c) => ({ name: c.name, description: c.description, input: { hint: 'arguments' } }));
    const key = JSON.stringify(availableCommands);
    if (key === this.commandsSent) return;
    this.commandsSent = key;
    this.send({ sessionUpdate: 'available_commands_update', availableCommands });
  }

  send(update: SessionUpdate): void {
    this.client.notify('session/update', { sessionId: this.id, update }).catch((err: unknown) => {
      if (this.connected()) process.stderr.write(`keel: acp: could not send an update: ${errorMessage(err)}\n`);
    });
  }

  async prompt(content: ContentBlockParam[]): Promise<StopReason> {
    if (this.running) throw RequestError.invalidRequest({ sessionId: this.id }, 'a prompt is already running in this session (cancel it with session/cancel first)');
    const controller = new AbortController();
    const work = this.run(content, controller);
    this.running = { controller, done: work.catch(() => undefined) };
    try {
      return await work;
    } finally {
      this.running = undefined;
    }
  }

  private async run(content: ContentBlockParam[], controller: AbortController): Promise<StopReason> {
    const text = content.length === 1 && content[0]!.type === 'text' ? content[0]!.text : '';
    const slash = await findSlashCommand(this.kernel, text);
    if (slash) {
      const result = await runSlashCommand(this.kernel, this.session, slash, controller.signal);
      if (result.result) this.send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: result.result } });
      if (controller.signal.aborted) return 'cancelled';
      if (result.isError) throw new RequestError(-32603, result.error ?? result.result);
      return 'end_turn';
    }
    const result = await runAgent(this.kernel, this.session, content, { signal: controller.signal, maxTurns: this.kernel.config.maxTurns });
    if (controller.signal.aborted || result.aborted) return 'cancelled';
    if (result.subtype === 'error_max_turns') return 'max_turn_requests';
    if (result.refusal || result.stopReason === 'refusal') return 'refusal';
    if (result.stopReason === 'max_tokens') return 'max_tokens';
    if (result.isError) throw new RequestError(-32603, `the turn failed: ${result.error ?? result.result}`);
    return 'end_turn';
  }

  /** True while a prompt runs. */
  busy(): boolean {
    return this.running !== undefined;
  }

  /** session/cancel: the turn stops at once (its tools' processes are killed); the prompt answers `cancelled`. */
  cancel(): void {
    this.running?.controller.abort(new Error('cancelled by the client (session/cancel)'));
  }

  setMode(modeId: string): void {
    const mode = MODES.find((m) => m.id === modeId) ? (modeId as PermissionMode) : normalizePermissionMode(modeId);
    const modes = this.modes().availableModes.map((m) => m.id);
    if (mode === 'auto' && this.bypassOff()) throw RequestError.invalidParams({ modeId }, `modeId: the auto (bypassPermissions) mode is disabled by managed settings (disableBypassPermissionsMode in ${this.bypassOff()}) (modes: ${modes.join(', ')})`);
    if (!mode) throw RequestError.invalidParams({ modeId }, `unknown mode ${JSON.stringify(modeId)} (modes: ${modes.join(', ')})`);
    if (this.session.permissionMode === mode) return;
    const from = this.session.permissionMode;
    this.session.permissionMode = mode;
    this.kernel.emit({ type: 'permission_mode', sessionId: this.session.id, from, to: mode, reason: 'the editor (session/set_mode)' });
  }

  /** Ends the session's work: the running turn is aborted and events no longer reach the editor. */
  async close(): Promise<void> {
    this.cancel();
    await this.running?.done;
    this.stopObserving();
    this.session.data.delete(HOST_KEY);
    await this.kernel.services.get('mcp')?.close();
    // The session file is flushed and closed (its lock released); a later session/load reopens it.
    (this.kernel.services.get('session-store') as { close?(session: Session): void } | undefined)?.close?.(this.session);
  }

  // ── the host the warm taps and services reach ──

  async ask(question: Question, turn: Turn): Promise<Answer | undefined> {
    if (question.kind === 'permission') return this.askPermission(question, turn);
    if (question.kind === 'choice') return this.askChoices(question, turn);
    return undefined;
  }

  private async askPermission(question: Extract<Question, { kind: 'permission' }>, turn: Turn): Promise<Answer> {
    const { call } = question;
    const planning = call.name === 'exit_plan_mode';
    const content: ToolCallContent[] = [];
    if (question.preview) content.push({ type: 'content', content: { type: 'text', text: planning ? question.preview : fence(question.preview) } });
    if (question.reason && !planning) content.push({ type: 'content', content: { type: 'text', text: question.reason } });
    if (!this.announced.has(call.id)) this.announceCall(call, 'pending');
    const options = question.options.map((choice) =>
      planning ? { ...OPTION[choice], name: choice.startsWith('allow') ? 'Yes, carry it out (edits mode)' : 'No, keep planning' } : { ...OPTION[choice], name: optionName(choice, call.name) },
    );
    const answer = await this.request('session/request_permission', { sessionId: this.id, toolCall: { toolCallId: call.id, ...this.describe(call), status: 'pending', content }, options }, turn.signal);
    if (!answer.ok) return { kind: 'permission', choice: 'deny', message: answer.error };
    const outcome = answer.value.outcome;
    if (outcome.outcome === 'cancelled' || turn.signal.aborted) return { kind: 'permission', choice: 'deny', message: 'the prompt was cancelled' };
    const choice = CHOICE_OF[outcome.optionId];
    if (!choice || !question.options.includes(choice)) return { kind: 'permission', choice: 'deny', message: `the editor answered with an unknown option ${JSON.stringify(outcome.optionId)}` };
    return { kind: 'permission', choice };
  }

  /** ask_user_question: each question as a permission request whose options are its choices (ACP has no other). */
  private async askChoices(question: Extract<Question, { kind: 'choice' }>, turn: Turn): Promise<Answer | undefined> {
    const answers: string[][] = [];
    for (const [i, q] of question.questions.entries()) {
      const id = `question-${Date.now()}-${i}`;
      const options: PermissionOption[] = q.options.map((o, n) => ({ optionId: String(n), name: o.label, kind: 'allow_once' }));
      options.push({ optionId: 'skip', name: 'Skip this question', kind: 'reject_once' });
      const detail = q.options.map((o) => `- ${o.label}${o.description ? `: ${o.description}` : ''}`).join('\n');
      const answer = await this.request(
        'session/request_permission',
        { sessionId: this.id, toolCall: { toolCallId: id, title: q.question, kind: 'other', status: 'pending', content: [{ type: 'content', content: { type: 'text', text: detail } }] }, options },
        turn.signal,
      );
      if (!answer.ok || answer.value.outcome.outcome === 'cancelled') return answers.length ? { kind: 'choice', answers } : undefined;
      const picked: unknown = answer.value.outcome.optionId;
      const chosen = picked === 'skip' ? undefined : options.find((o) => o.optionId === picked && o.optionId !== 'skip');
      // Only an option offered is an answer: anything else the editor sends counts as no answer, never as the user's words.
      if (picked !== 'skip' && !chosen) process.stderr.write(`keel: acp: the editor answered "${q.question}" with an option it was not offered (${JSON.stringify(picked)}); the question counts as unanswered\n`);
      answers.push(chosen ? [q.options[Number(chosen.optionId)]!.label] : []);
    }
    return { kind: 'choice', answers };
  }

  handlesFiles(what: 'read' | 'write'): boolean {
    return what === 'read' ? this.caps.fs?.readTextFile === true : this.caps.fs?.writeTextFile === true;
  }

  async readText(abs: string, signal: AbortSignal): Promise<string> {
    const reply: unknown = await this.client.request('fs/read_text_file', { sessionId: this.id, path: abs }, { cancellationSignal: signal });
    // The SDK does not check what the editor answers: a reply without text is an error naming the field, not a crash.
    const content = (reply as { content?: unknown } | null)?.content;
    if (typeof content !== 'string') throw new Error(`the editor's answer to fs/read_text_file for ${abs} has no text: content is ${content === undefined ? 'missing' : `a ${content === null ? 'null' : typeof content}`}, not a string`);
    return content;
  }

  async writeText(abs: string, text: string, signal: AbortSignal): Promise<void> {
    await this.client.request('fs/write_text_file', { sessionId: this.id, path: abs, content: text }, { cancellationSignal: signal });
  }

  handlesTerminal(): boolean {
    return this.caps.terminal === true;
  }

  /** bash in an editor terminal, shown in its tool call; a timeout or a cancel kills it there. */
  async runInTerminal(run: TerminalRun): Promise<TerminalOutcome> {
    // Only what Keel sets for its commands: the editor's terminal has its own environment (and Keel's secrets stay here).
    const env = ['GIT_PAGER', 'PAGER', 'GIT_EDITOR', 'GIT_TERMINAL_PROMPT'].filter((k) => run.env[k] !== undefined).map((name) => ({ name, value: run.env[name]! }));
    const terminal = await this.client.createTerminal({ sessionId: this.id, command: run.file, args: run.args, cwd: run.cwd, env, outputByteLimit: run.outputLimit * 4 });
    if (typeof terminal.id !== 'string' || !terminal.id) throw new Error(`the editor's answer to terminal/create has no terminalId (got ${JSON.stringify(terminal.id) ?? 'nothing'})`);
    this.terminals.set(run.toolUseId, terminal.id);
    this.send({ sessionUpdate: 'tool_call_update', toolCallId: run.toolUseId, status: 'in_progress', content: [{ type: 'terminal', terminalId: terminal.id }] });
    let timedOut = false;
    let aborted = false;
    let timer: NodeJS.Timeout | undefined;
    const stop = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        timedOut = true;
        resolve();
      }, run.timeoutMs);
      const onAbort = () => {
        aborted = true;
        resolve();
      };
      if (run.signal.aborted) onAbort();
      else run.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const exited = await Promise.race([terminal.waitForExit(), stop.then(() => undefined)]);
      if (!exited) await terminal.kill().catch(() => undefined);
      const current: unknown = await terminal.currentOutput();
      const output = (current as { output?: unknown } | null)?.output;
      if (typeof output !== 'string') throw new Error(`the editor's answer to terminal/output has no output text (got ${JSON.stringify(current) ?? 'nothing'})`);
      const answered = current as { truncated?: unknown; exitStatus?: { exitCode?: number | null; signal?: string | null } | null };
      const status = (exited as typeof answered.exitStatus) ?? answered.exitStatus ?? {};
      return {
        output,
        truncated: answered.truncated === true,
        exitCode: typeof status.exitCode === 'number' ? status.exitCode : null,
        signal: typeof status.signal === 'string' ? (status.signal as NodeJS.Signals) : null,
        timedOut,
        aborted,
        fd3: '',
      };
    } finally {
      clearTimeout(timer);
      await terminal.release().catch(() => undefined);
    }
  }

  // ── events → updates ──

  private describe(call: ToolCall) {
    return {
      title: titleOf(call.name, call.input, this.session.cwd),
      kind: kindOf(call.name, call.input),
      locations: locationsOf(this.kernel, call.name, call.input, this.session.cwd),
      rawInput: call.input,
    };
  }

  private announceCall(call: ToolCall, status: 'pending' | 'in_progress'): void {
    if (this.announced.has(call.id)) {
      this.send({ sessionUpdate: 'tool_call_update', toolCallId: call.id, status });
      return;
    }
    this.announced.add(call.id);
    this.send({ sessionUpdate: 'tool_call', toolCallId: call.id, ...this.describe(call), status });
  }

  private onEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'text_delta':
        if (event.text) this.send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.text } });
        return;
      case 'thinking_delta':
        if (event.text) this.send({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: event.text } });
        return;
      case 'assistant_message':
        // The editor lists a response's calls as soon as the model has made them; each then goes its own way.
        for (const block of event.response.content) {
          if (block.type === 'tool_use' && !this.announced.has(block.id)) this.announceCall({ id: block.id, name: block.name, input: block.input }, 'pending');
        }
        return;
      case 'tool_start':
        this.announceCall(event.call, 'in_progress');
        return;
      case 'tool_output': {
        const sofar = `${this.output.get(event.id) ?? ''}${event.chunk}`.slice(-LIVE_OUTPUT_CHARS);
        this.output.set(event.id, sofar);
        this.send({ sessionUpdate: 'tool_call_update', toolCallId: event.id, content: [{ type: 'content', content: { type: 'text', text: fence(sofar) } }] });
        return;
      }
      case 'tool_end': {
        const { call, result } = event;
        this.output.delete(call.id);
        const terminal = this.terminals.get(call.id);
        this.terminals.delete(call.id);
        const content = resultContent(call.name, result);
        if (terminal) content.unshift({ type: 'terminal', terminalId: terminal });
        if (!this.announced.has(call.id)) this.announceCall(call, 'in_progress');
        this.send({ sessionUpdate: 'tool_call_update', toolCallId: call.id, status: result.isError ? 'failed' : 'completed', content });
        if (call.name === 'todo_write' && !result.isError) this.send({ sessionUpdate: 'plan', ...toPlan(this.kernel.state.get().todos) });
        return;
      }
      case 'permission':
        // A call refused before it ran (by the policy or the user) still ends in the editor's list, saying why.
        if (event.decision.behavior === 'deny') {
          if (!this.announced.has(event.call.id)) this.announceCall(event.call, 'pending');
          this.send({ sessionUpdate: 'tool_call_update', toolCallId: event.call.id, status: 'failed', content: [{ type: 'content', content: { type: 'text', text: event.decision.reason } }] });
        }
        return;
      case 'log':
        if (event.level === 'warn' || event.level === 'error') process.stderr.write(`keel: ${event.level}: ${event.message}\n`);
        return;
      default:
        if ((event as { type: string }).type === 'mcp_status') this.sendCommands();
        else if ((event as { type: string }).type === 'permission_mode') this.send({ sessionUpdate: 'current_mode_update', currentModeId: (event as unknown as { to: string }).to });
    }
  }

  private async request(
    method: 'session/request_permission',
    params: RequestPermissionRequest,
    signal: AbortSignal,
  ): Promise<{ ok: true; value: RequestPermissionResponse } | { ok: false; error: string }> {
    try {
      return { ok: true, value: await this.client.request(method, params, { cancellationSignal: signal }) };
    } catch (err) {
      return { ok: false, error: `the editor did not answer: ${errorMessage(err)}` };
    }
  }
}
