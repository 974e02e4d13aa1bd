/**
 * One protocol session: user messages in, stream-json messages out, control requests both ways. The SDK
 * mode runs it over stdin/stdout, the sub-agent mode over the pipes to its parent, `keel/sdk`'s in-process
 * `query()` over in-memory queues.
 */
import {
  errorMessage as describeError,
  findSlashCommand,
  normalizePermissionMode,
  runAgent,
  runSlashCommand,
  type AgentEvent,
  type Answer,
  type ContentBlockParam,
  type Kernel,
  type Question,
  type RunResult,
  type Session,
  type SessionInit,
  type Turn,
} from '../../kernel/index.js';
import { protocol } from '../../kernel/index.js';
import { invalidBlock } from './blocks.js';
import { DRIVER_KEY } from './session-driver.js';

/** One input item: a parsed message, or why a line could not be parsed. `where` names it in errors. */
export type Incoming = { where: string; value: unknown } | { where: string; error: string };

/** What `initialize` may set that maps onto Keel. */
export interface AgentDefinitionInput {
  description: string;
  prompt: string;
  tools?: string[];
  model?: string;
}

/** Offered by the `tool-agent` plugin: agents an SDK host defines in `initialize`. */
export interface AgentsService {
  define(session: Session, agents: Record<string, AgentDefinitionInput>): void;
  names(session: Session): string[];
}

export interface DriverOptions {
  kernel: Kernel;
  input: AsyncIterable<Incoming>;
  write(message: protocol.OutMessage): void;
  startSession(overrides: Partial<SessionInit>): Promise<Session>;
  /** Aborted when the whole process should stop (SIGINT, the host's abort). */
  signal: AbortSignal;
  maxTurns?: number;
  /** Ask the host (`can_use_tool`) when a call needs approval; otherwise such calls are denied. */
  askHost: boolean;
  /** Also write `stream_event` lines. */
  partial: boolean;
  /** Sub-agent: run the first user message only, and abort it if the input ends first. */
  once: boolean;
  /**
   * A user message `/name args` runs the registered slash command (an SDK host's `/compact`, `/cost`). Off for
   * sub-agents: their task is written by a model, which must not reach commands such as `/permissions`.
   */
  slashCommands: boolean;
  session?: Partial<SessionInit>;
}

type Pending = { resolve(value: { ok: true; response: Record<string, unknown> } | { ok: false; error: string }): void };

export class ProtocolDriver {
  private session: Session | undefined;
  private starting: Promise<Session> | undefined;
  private overrides: Partial<SessionInit>;
  private queue: Array<{ content: string | ContentBlockParam[] }> = [];
  private current: AbortController | undefined;
  private working: Promise<void> | undefined;
  private pending = new Map<string, Pending>();
  /** Requests Keel stopped waiting for (the turn was interrupted): a late answer to one is dropped without a word. */
  private abandoned = new Set<string>();
  private nextRequest = 0;
  private inputEnded = false;
  private lastResult: RunResult | undefined;
  private agents: Record<string, AgentDefinitionInput> | undefined;
  private partial: protocol.PartialStream;
  private failed = false;
  /** Resolves when reading should stop: the process is aborting, or a sub-agent has its result. */
  private stopReading!: () => void;
  private readingStopped = new Promise<'stop'>((resolve) => {
    this.stopReading = () => resolve('stop');
  });

  constructor(private readonly opts: DriverOptions) {
    this.overrides = { ...opts.session };
    this.partial = new protocol.PartialStream(() => this.session);
  }

  /** Serves the session until the input ends (and queued turns finish). Returns the exit code. */
  async run(): Promise<number> {
    const { kernel } = this.opts;
    const stop = kernel.observe((event) => this.onEvent(event));
    const onAbort = () => {
      this.current?.abort(this.opts.signal.reason);
      this.stopReading();
    };
    if (this.opts.signal.aborted) onAbort();
    this.opts.signal.addEventListener('abort', onAbort);
    const iterator = this.opts.input[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await Promise.race([iterator.next(), this.readingStopped]);
        if (next === 'stop' || next.done) break;
        this.accept(next.value);
      }
      void iterator.return?.();
      this.inputEnded = true;
      // No answer can come any more: a question in flight is denied, and later ones are not sent.
      for (const pending of [...this.pending.values()]) pending.resolve({ ok: false, error: 'the input ended before the host answered' });
      // A sub-agent whose parent went away stops; an SDK host that closed its input gets its queued turns.
      if (this.opts.once) this.current?.abort(new Error('the parent closed the input'));
      await this.working;
      if (this.opts.once && !this.lastResult) {
        this.opts.write(protocol.errorMessage(this.session, 'no task: the input ended before a user message arrived'));
        return 2;
      }
      return this.failed || this.lastResult?.isError ? 1 : 0;
    } finally {
      this.opts.signal.removeEventListener('abort', onAbort);
      stop();
      if (this.session) {
        this.session.data.delete(DRIVER_KEY);
        // As after `-p`: the session is flushed and closed and its lock released now. A store that holds a connection
        // (session-store-redis) would otherwise keep the process alive after its last turn, and a sub-agent's parent
        // waits for it to exit.
        (kernel.services.get('session-store') as { close(session: Session): void } | undefined)?.close(this.session);
      }
    }
  }

  /** A permission question for the host, asked as a `can_use_tool` control request. */
  async ask(question: Extract<Question, { kind: 'permission' }>, turn: Turn): Promise<Answer | undefined> {
    if (!this.opts.askHost) return undefined;
    const request: Record<string, unknown> = {
      subtype: 'can_use_tool',
      tool_name: question.call.name,
      input: question.call.input,
      tool_use_id: question.call.id,
      permission_suggestions: [],
      ...(question.reason ? { decision_reason: question.reason } : {}),
      ...(question.subagent ? { subagent: { name: question.subagent.name, parent_tool_use_id: question.subagent.toolUseId } } : {}),
    };
    const reply = await this.request(request, turn.signal);
    if (!reply.ok) return { kind: 'permission', choice: 'deny', message: `the host did not allow it (${reply.error})` };
    const behavior = reply.response.behavior;
    if (behavior === 'allow') {
      return { kind: 'permission', choice: 'allow_once', updatedInput: reply.response.updatedInput };
    }
    if (behavior === 'deny') {
      const message = typeof reply.response.message === 'string' ? reply.response.message : undefined;
      return { kind: 'permission', choice: 'deny', message };
    }
    return { kind: 'permission', choice: 'deny', message: `the host answered can_use_tool with behavior ${JSON.stringify(behavior)} (expected "allow" or "deny")` };
  }

  private request(body: Record<string, unknown>, signal: AbortSignal): Promise<{ ok: true; response: Record<string, unknown> } | { ok: false; error: string }> {
    if (this.inputEnded) return Promise.resolve({ ok: false, error: 'the input has ended' });
    const id = `keel_req_${++this.nextRequest}`;
    return new Promise((resolve) => {
      const onAbort = () => {
        this.abandoned.add(id);
        finish({ ok: false, error: 'the turn was interrupted' });
      };
      const finish: Pending['resolve'] = (value) => {
        this.pending.delete(id);
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      this.pending.set(id, { resolve: finish });
      signal.addEventListener('abort', onAbort, { once: true });
      this.opts.write(protocol.controlRequest(id, body));
    });
  }

  private accept(item: Incoming): void {
    const { write } = this.opts;
    if ('error' in item) {
      write(protocol.errorMessage(this.session, `${item.where}: ${item.error}`));
      return;
    }
    const value = item.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      write(protocol.errorMessage(this.session, `${item.where}: expected a JSON object with a string "type"`));
      return;
    }
    const message = value as Record<string, unknown>;
    switch (message.type) {
      case 'user':
        return this.acceptUser(item.where, message);
      case 'control_request':
        return void this.control(item.where, message);
      case 'control_response':
        return this.acceptResponse(item.where, message);
      case 'control_cancel_request':
        return;
      default:
        write(protocol.errorMessage(this.session, `${item.where}: unknown message type "${String(message.type)}" (expected user, control_request or control_response)`));
    }
  }

  private acceptUser(where: string, message: Record<string, unknown>): void {
    const inner = message.message as { role?: unknown; content?: unknown } | undefined;
    const content = inner?.content;
    const valid = typeof content === 'string' ? content.length > 0 : Array.isArray(content) && content.length > 0 && content.every((b) => typeof b === 'object' && b !== null && typeof (b as { type?: unknown }).type === 'string');
    if (!inner || typeof inner !== 'object' || (inner.role !== undefined && inner.role !== 'user') || !valid) {
      this.opts.write(protocol.errorMessage(this.session, `${where}: a user message needs message.content: a non-empty string or an array of content blocks`));
      return;
    }
    const bad = Array.isArray(content) ? invalidBlock(content) : undefined;
    if (bad) {
      this.opts.write(protocol.errorMessage(this.session, `${where}: ${bad}; the message was not sent or saved`));
      return;
    }
    if (this.opts.once && (this.queue.length > 0 || this.working)) {
      this.opts.write(protocol.errorMessage(this.session, `${where}: a sub-agent takes one task; this message was ignored`));
      return;
    }
    this.queue.push({ content: content as string | ContentBlockParam[] });
    if (!this.working) this.working = this.work();
  }

  private acceptResponse(where: string, message: Record<string, unknown>): void {
    const response = message.response as { subtype?: unknown; request_id?: unknown; response?: unknown; error?: unknown } | undefined;
    const id = typeof response?.request_id === 'string' ? response.request_id : undefined;
    const pending = id ? this.pending.get(id) : undefined;
    if (id && !pending && this.abandoned.delete(id)) return;
    if (!response || !pending) {
      this.opts.write(protocol.errorMessage(this.session, `${where}: control_response for unknown request_id ${JSON.stringify(response?.request_id)}`));
      return;
    }
    if (response.subtype === 'success') {
      const body = response.response;
      pending.resolve({ ok: true, response: typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {} });
    } else {
      pending.resolve({ ok: false, error: typeof response.error === 'string' ? response.error : 'error' });
    }
  }

  private async control(where: string, message: Record<string, unknown>): Promise<void> {
    const { write } = this.opts;
    const id = message.request_id;
    const request = message.request as Record<string, unknown> | undefined;
    if (typeof id !== 'string' || !id) {
      write(protocol.errorMessage(this.session, `${where}: a control_request needs a string request_id`));
      return;
    }
    if (typeof request !== 'object' || request === null || typeof request.subtype !== 'string') {
      write(protocol.controlError(id, 'the control_request has no request.subtype'));
      return;
    }
    try {
      write(protocol.controlSuccess(id, await this.answerControl(request)));
    } catch (err) {
      write(protocol.controlError(id, describeError(err)));
    }
  }

  private async answerControl(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { kernel } = this.opts;
    switch (request.subtype) {
      case 'initialize': {
        const ignored: string[] = [];
        const system = request.systemPrompt;
        if (system !== undefined) {
          if (typeof system === 'string') this.overrides.systemPrompt = system;
          else if (Array.isArray(system) && system.every((s) => typeof s === 'string')) this.overrides.systemPrompt = system.join('\n\n');
          else throw new Error('initialize: systemPrompt must be a string or an array of strings');
        }
        if (request.appendSystemPrompt !== undefined) {
          if (typeof request.appendSystemPrompt !== 'string') throw new Error('initialize: appendSystemPrompt must be a string');
          this.overrides.appendSystemPrompt = request.appendSystemPrompt;
        }
        if (request.agents !== undefined) this.agents = parseAgents(request.agents);
        if (request.hooks !== undefined && request.hooks !== null) ignored.push('hooks');
        if (this.session) {
          if (this.overrides.systemPrompt !== undefined) this.session.systemPrompt = this.overrides.systemPrompt;
          if (this.overrides.appendSystemPrompt !== undefined) this.session.appendSystemPrompt = this.overrides.appendSystemPrompt;
          this.defineAgents(this.session);
        }
        return {
          commands: kernel.commands.list().map((c) => ({ name: c.name, description: c.description, argumentHint: '' })),
          models: [],
          output_style: 'default',
          ...(ignored.length ? { ignored } : {}),
        };
      }
      case 'interrupt':
        this.current?.abort(new Error('interrupted by the host'));
        return {};
      case 'set_permission_mode': {
        const mode = typeof request.mode === 'string' ? normalizePermissionMode(request.mode) : undefined;
        if (!mode) throw new Error(`set_permission_mode: unknown mode ${JSON.stringify(request.mode)} (auto, edits, ask, manual, plan, default, acceptEdits, bypassPermissions)`);
        const bypassOff = kernel.config.managed?.disableBypassPermissionsMode;
        if (mode === 'auto' && bypassOff) throw new Error(`set_permission_mode: the auto (bypassPermissions) mode is disabled by managed settings (${bypassOff})`);
        this.overrides.permissionMode = mode;
        if (this.session) this.session.permissionMode = mode;
        return { mode };
      }
      case 'set_model': {
        if (request.model !== undefined && request.model !== null && (typeof request.model !== 'string' || !request.model)) {
          throw new Error('set_model: model must be a non-empty string (or null for the default)');
        }
        const model = (request.model as string | null | undefined) || kernel.config.model;
        const pinned = kernel.config.managed?.model;
        if (pinned && model !== pinned.value) throw new Error(`set_model: managed settings pin the model ${pinned.value} (${pinned.file})`);
        this.overrides.model = model;
        if (this.session) this.session.model = model;
        return { model };
      }
      default:
        throw new Error(`unknown control request subtype "${String(request.subtype)}" (supported: initialize, interrupt, set_permission_mode, set_model)`);
    }
  }

  private defineAgents(session: Session): void {
    if (!this.agents) return;
    const service = this.opts.kernel.services.get('agents') as AgentsService | undefined;
    service?.define(session, this.agents);
  }

  private async ensureSession(): Promise<Session> {
    if (this.session) return this.session;
    this.starting ??= this.opts.startSession(this.overrides).then((session) => {
      session.data.set(DRIVER_KEY, this);
      this.session = session;
      this.defineAgents(session);
      const service = this.opts.kernel.services.get('agents') as AgentsService | undefined;
      this.opts.write(protocol.initMessage(this.opts.kernel, session, { agents: service?.names(session) }));
      return session;
    });
    return this.starting;
  }

  private async work(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const next = this.queue.shift()!;
        const session = await this.ensureSession();
        this.current = new AbortController();
        // Aborted already: the turn still gets its result (an interrupted one), as every user message does.
        if (this.opts.signal.aborted) this.current.abort(this.opts.signal.reason);
        const slash = this.opts.slashCommands ? await findSlashCommand(this.opts.kernel, slashText(next.content)) : undefined;
        const result = slash
          ? await runSlashCommand(this.opts.kernel, session, slash, this.current.signal)
          : await runAgent(this.opts.kernel, session, next.content, { signal: this.current.signal, maxTurns: this.opts.maxTurns });
        this.current = undefined;
        this.lastResult = result;
        this.opts.write(protocol.resultMessage(session, result, result.costUsd, (this.opts.kernel.services.get('usage') as { modelUsage?: () => Record<string, unknown> } | undefined)?.modelUsage?.() ?? {}));
        if (this.opts.once) {
          this.stopReading();
          return;
        }
      }
    } catch (err) {
      // A turn that could not run at all (the session did not start): report it; the next message may work.
      this.opts.write(protocol.errorMessage(this.session, describeError(err)));
      this.failed = true;
      if (this.opts.once) this.stopReading();
    } finally {
      this.working = undefined;
      this.current = undefined;
    }
    if (this.queue.length > 0 && !this.opts.once) this.working = this.work();
  }

  private onEvent(event: AgentEvent): void {
    const { write } = this.opts;
    const session = this.session;
    if (!session) return;
    if (this.opts.partial) for (const line of this.partial.lines(event)) write(line);
    const line = protocol.eventMessage(session, event);
    if (line) write(line);
  }
}

/** The text of a message that could be a slash command: a string, or a single text block. */
function slashText(content: string | ContentBlockParam[]): string {
  if (typeof content === 'string') return content;
  const [only] = content;
  return content.length === 1 && only?.type === 'text' ? only.text : '';
}

function parseAgents(value: unknown): Record<string, AgentDefinitionInput> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('initialize: agents must be an object of { description, prompt, tools?, model? } by name');
  const out: Record<string, AgentDefinitionInput> = {};
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    const def = raw as Partial<AgentDefinitionInput> | null;
    if (!def || typeof def.description !== 'string' || typeof def.prompt !== 'string') {
      throw new Error(`initialize: agents.${name} needs a string description and prompt`);
    }
    if (def.tools !== undefined && !(Array.isArray(def.tools) && def.tools.every((t) => typeof t === 'string'))) {
      throw new Error(`initialize: agents.${name}.tools must be an array of tool names`);
    }
    out[name] = { description: def.description, prompt: def.prompt, tools: def.tools, model: typeof def.model === 'string' ? def.model : undefined };
  }
  return out;
}
