/**
 * The agent loop: ① contextLoad → ② selectTools → ④ query → ⑤ route on stop_reason → ⑥ tools → ⑦ postTurn.
 * Every tool_use gets exactly one tool_result, whatever happens to the call.
 */
import type { ZodError } from 'zod';
import { errorMessage, inCauseChain, isAbortError, isContextOverflow, userMessage } from './errors.js';
import type { Kernel } from './kernel.js';
import { apiToolsBytes, describeInputError, toApiTool } from './tool-schema.js';
import { responseText } from './session.js';
import { canonicalToolName } from './tool-names.js';
import type {
  AgentEvent,
  ContentBlock,
  ContentBlockParam,
  Decision,
  MessageParam,
  PermissionDenial,
  QueryRequest,
  QueryResponse,
  RunResult,
  Session,
  TokenUsage,
  ToolCall,
  ToolDefinition,
  ToolResult,
  ToolResultBlockParam,
  TurnRecord,
  Turn,
  TurnAllowance,
} from './types.js';

export interface RunOptions {
  signal?: AbortSignal;
  maxTurns?: number;
}

/** How many times in a row the loop lets compaction free room before it gives up. */
const MAX_ROOM_RETRIES = 3;

export const emptyUsage = (): TokenUsage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

export function addUsage(total: TokenUsage, add: Partial<TokenUsage>): TokenUsage {
  return {
    input_tokens: total.input_tokens + (add.input_tokens ?? 0),
    output_tokens: total.output_tokens + (add.output_tokens ?? 0),
    cache_creation_input_tokens: total.cache_creation_input_tokens + (add.cache_creation_input_tokens ?? 0),
    cache_read_input_tokens: total.cache_read_input_tokens + (add.cache_read_input_tokens ?? 0),
  };
}

interface RunState {
  kernel: Kernel;
  session: Session;
  signal: AbortSignal;
  usage: TokenUsage;
  costUsd: number;
  apiMs: number;
  denials: PermissionDenial[];
  fields: Record<string, unknown>;
}

/** Runs one user request to completion: the model and its tools, turn after turn. */
export async function runAgent(
  kernel: Kernel,
  session: Session,
  prompt: string | ContentBlockParam[],
  opts: RunOptions = {},
): Promise<RunResult> {
  const started = Date.now();
  const signal = opts.signal ?? new AbortController().signal;
  const maxTurns = opts.maxTurns ?? kernel.config.maxTurns;
  const run: RunState = { kernel, session, signal, usage: emptyUsage(), costUsd: 0, apiMs: 0, denials: [], fields: {} };
  const promptMessage: MessageParam = { role: 'user', content: prompt };
  appendMessage(kernel, session, promptMessage);
  kernel.emit({ type: 'user_message', message: promptMessage });
  kernel.state.set({ isLoading: true });

  const finish = (partial: Partial<RunResult> & Pick<RunResult, 'subtype'>, numTurns: number): RunResult => {
    kernel.state.set({ isLoading: false, currentToolCall: null });
    const result: RunResult = {
      isError: partial.subtype !== 'success',
      result: '',
      stopReason: null,
      numTurns,
      ...(borrowed > 0 ? { toolTurns: borrowed } : {}),
      durationMs: Date.now() - started,
      durationApiMs: run.apiMs,
      usage: run.usage,
      costUsd: run.costUsd,
      permissionDenials: run.denials,
      ...(Object.keys(run.fields).length ? { fields: run.fields } : {}),
      ...partial,
    };
    kernel.emit({ type: 'result', result });
    return result;
  };

  let turnIndex = 0;
  let roomRetries = 0;
  // Turns that tools (sub-agents) took from this run's allowance: they count against maxTurns like the run's own.
  let borrowed = 0;
  const allowance: TurnAllowance = {
    max: maxTurns,
    left: () => Math.max(0, maxTurns - turnIndex - borrowed),
    take(wanted) {
      const taken = Math.max(0, Math.min(Math.floor(wanted), allowance.left()));
      borrowed += taken;
      return taken;
    },
    giveBack(unused) {
      borrowed -= Math.max(0, Math.min(Math.floor(unused), borrowed));
    },
  };
  for (;;) {
    if (signal.aborted) return finish({ subtype: 'error_during_execution', aborted: true, error: 'aborted by user' }, turnIndex);
    if (turnIndex + borrowed >= maxTurns) {
      const by = borrowed > 0 ? ` (${borrowed} of them by sub-agents)` : '';
      return finish({ subtype: 'error_max_turns', error: `reached the maximum of ${maxTurns} turns${by}` }, turnIndex);
    }
    turnIndex++;
    const turn = createTurn(kernel, session, turnIndex, signal, allowance);
    kernel.emit({ type: 'turn_start', turn: turnIndex });

    let request: QueryRequest;
    let response: QueryResponse;
    const t0 = Date.now();
    try {
      request = await buildRequest(kernel, session, turn);
      response = await callModel(kernel, request, turn);
    } catch (err) {
      run.apiMs += Date.now() - t0;
      if (signal.aborted || isAbortError(err)) {
        return finish({ subtype: 'error_during_execution', aborted: true, error: 'aborted by user' }, turnIndex);
      }
      if (isContextOverflow(err) && roomRetries < MAX_ROOM_RETRIES) {
        roomRetries++;
        if (await freeRoom(kernel, session, signal)) {
          turnIndex--;
          continue;
        }
      }
      if (turnIndex === 1 && inCauseChain(err, (e) => e.code === 'invalid_request') && dropPrompt(kernel, session, promptMessage)) {
        return finish({ subtype: 'error_during_execution', error: `${userMessage(err)} (the prompt was not kept in the session)` }, turnIndex);
      }
      return finish({ subtype: runSubtypeOf(err) ?? 'error_during_execution', error: userMessage(err) }, turnIndex);
    }
    run.apiMs += Date.now() - t0;
    run.usage = addUsage(run.usage, response.usage);
    run.costUsd += response.costUsd ?? 0;

    const assistant: MessageParam = { role: 'assistant', content: response.content as ContentBlockParam[] };
    appendMessage(kernel, session, assistant);
    kernel.emit({ type: 'assistant_message', message: assistant, response });

    const calls = toolCalls(response.content);
    let toolResults: ToolResultBlockParam[] = [];
    const ended: string[] = [];
    if (calls.length > 0) {
      const truncated = response.stopReason === 'max_tokens';
      toolResults = truncated
        ? calls.map((call) => errorBlock(call.id, 'Your output hit the max_tokens limit and this tool call was cut off. Retry with a smaller input.'))
        : await runToolCalls(run, turn, calls, ended);
      const message: MessageParam = { role: 'user', content: toolResults };
      appendMessage(kernel, session, message);
      kernel.emit({ type: 'tool_results', message });
    }
    const record: TurnRecord = { request, response, toolResults, apiDurationMs: Date.now() - t0 };
    await kernel.hooks.postTurn.promise(record, turn);
    Object.assign(run.fields, record.fields);
    if (record.end) return finish({ subtype: record.end.subtype, stopReason: response.stopReason, error: record.end.error }, turnIndex);

    if (signal.aborted) return finish({ subtype: 'error_during_execution', aborted: true, error: 'aborted by user' }, turnIndex);
    if (ended.length > 0) return finish({ subtype: 'success', isError: false, stopReason: response.stopReason, result: ended.join('\n\n') }, turnIndex);
    const text = responseText(response.content);
    switch (response.stopReason) {
      case 'tool_use':
      case 'pause_turn':
        roomRetries = 0;
        continue;
      case 'refusal':
        kernel.emit({ type: 'refusal', text });
        return finish({ subtype: 'success', isError: false, refusal: true, stopReason: 'refusal', result: text || 'The model declined to respond.' }, turnIndex);
      case 'max_tokens':
      case 'model_context_window_exceeded': {
        if (roomRetries >= MAX_ROOM_RETRIES) {
          return finish(
            { subtype: 'error_during_execution', stopReason: response.stopReason, result: text, error: `the model ran out of room (${response.stopReason}) ${MAX_ROOM_RETRIES} times in a row` },
            turnIndex,
          );
        }
        roomRetries++;
        await freeRoom(kernel, session, signal);
        if (calls.length === 0) {
          const nudge: MessageParam = { role: 'user', content: 'Your response was cut off at the output limit. Continue exactly where you stopped.' };
          appendMessage(kernel, session, nudge);
        }
        continue;
      }
      default:
        if (record.followUp && calls.length === 0) {
          appendMessage(kernel, session, record.followUp);
          kernel.emit({ type: 'user_message', message: record.followUp });
          continue;
        }
        return finish({ subtype: 'success', isError: false, stopReason: response.stopReason, result: text }, turnIndex);
    }
  }
}

function createTurn(kernel: Kernel, session: Session, index: number, signal: AbortSignal, turns: TurnAllowance): Turn {
  return { session, kernel, index, signal, data: new Map(), emit: (event: AgentEvent) => kernel.emit(event), turns };
}

/** The result subtype an error asks for (`runSubtype` in its cause chain: a spent budget), if any. */
function runSubtypeOf(err: unknown): RunResult['subtype'] | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const subtype = (e as { runSubtype?: unknown }).runSubtype;
    if (typeof subtype === 'string') return subtype as RunResult['subtype'];
  }
  return undefined;
}

/**
 * Takes back a prompt the API refused as invalid on its first request, so it does not poison every later turn and
 * resume; the session store records the shorter history when the run's `result` is emitted. False when the prompt
 * is no longer the last message (nothing is dropped then).
 */
function dropPrompt(kernel: Kernel, session: Session, prompt: MessageParam): boolean {
  if (session.messages[session.messages.length - 1] !== prompt) return false;
  session.messages.pop();
  kernel.state.set({ messages: session.messages.slice() });
  return true;
}

function appendMessage(kernel: Kernel, session: Session, message: MessageParam): void {
  session.messages.push(message);
  kernel.state.set({ messages: session.messages.slice() });
}

/** The tools a request carries before `selectTools`: core tools and deferred ones whose `loadWhen` holds. */
export function defaultTools(kernel: Kernel, turn: Turn): ToolDefinition[] {
  return kernel.tools
    .list()
    .filter((tool) => toolGiven(kernel, tool.name) && (!tool.deferLoading || (tool.loadWhen?.({ session: turn.session, turn }) ?? false)));
}

/** False for a tool left out by config `tools` (`--tools`, a sub-agent's tool list): for this agent it does not exist. */
export function toolGiven(kernel: Kernel, name: string): boolean {
  const given = kernel.config.tools;
  return !Array.isArray(given) || given.some((entry) => canonicalToolName(entry) === name);
}

async function buildRequest(kernel: Kernel, session: Session, turn: Turn): Promise<QueryRequest> {
  const context = await kernel.hooks.contextLoad.promise(
    {
      system: [],
      messages: session.messages.slice(),
      budget: { window: kernel.state.get().contextWindow, used: kernel.state.get().contextTokens, maxOutput: kernel.config.maxTokens },
    },
    turn,
  );
  const tools = await kernel.hooks.selectTools.promise(context.tools ?? defaultTools(kernel, turn), turn);
  const apiTools = tools.map(toApiTool);
  const bytes = apiToolsBytes(apiTools);
  kernel.emit({ type: 'tools_bytes', bytes, count: apiTools.length, names: apiTools.map((t) => t.name) });
  return {
    tier: 'main',
    model: session.model,
    system: context.system,
    messages: context.messages,
    tools: apiTools,
    maxTokens: kernel.config.maxTokens,
    thinking: kernel.config.thinking,
    signal: turn.signal,
    stream: true,
  };
}

async function callModel(kernel: Kernel, request: QueryRequest, turn: Turn): Promise<QueryResponse> {
  const response = await kernel.hooks.query.promise(request, turn);
  if (!response) throw new Error('no plugin answered the query hook: add a provider plugin such as query-anthropic to the preset');
  return response;
}

async function freeRoom(kernel: Kernel, session: Session, signal: AbortSignal): Promise<boolean> {
  const compactor = kernel.services.get('compaction');
  if (!compactor) return false;
  try {
    return await compactor.compact(session, { trigger: 'overflow', signal });
  } catch (err) {
    kernel.log('error', `compaction failed: ${errorMessage(err)}`, 'loop');
    return false;
  }
}

function toolCalls(content: ContentBlock[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of content) if (block.type === 'tool_use') calls.push({ id: block.id, name: block.name, input: block.input });
  return calls;
}

function errorBlock(id: string, message: string): ToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: id, content: message, is_error: true };
}

function resultBlock(id: string, result: ToolResult): ToolResultBlockParam {
  const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: id, content: result.content };
  if (result.isError) block.is_error = true;
  return block;
}

type Admitted = { call: ToolCall; tool: ToolDefinition; input: unknown } | { call: ToolCall; result: ToolResultBlockParam };

/** Validates and permission-checks every call (in order, so questions come one at a time), then runs them. */
async function runToolCalls(run: RunState, turn: Turn, calls: ToolCall[], ended: string[]): Promise<ToolResultBlockParam[]> {
  const admitted: Admitted[] = [];
  for (const call of calls) {
    if (run.signal.aborted) {
      admitted.push({ call, result: errorBlock(call.id, 'Interrupted by the user before this tool ran.') });
      continue;
    }
    admitted.push(await admit(run, turn, call));
  }
  const runnable = admitted.filter((a): a is Extract<Admitted, { tool: ToolDefinition }> => 'tool' in a);
  const parallel = runnable.length > 1 && runnable.every((a) => a.tool.permission === 'read' || a.tool.concurrent);
  const results = new Map<string, ToolResultBlockParam>();
  const execute = async (a: Extract<Admitted, { tool: ToolDefinition }>) => {
    results.set(a.call.id, await executeCall(run, turn, a.call, a.tool, a.input, ended));
  };
  if (parallel) await Promise.all(runnable.map(execute));
  else for (const a of runnable) await execute(a);
  return admitted.map((a) => ('result' in a ? a.result : results.get(a.call.id) ?? errorBlock(a.call.id, 'The tool produced no result.')));
}

async function admit(run: RunState, turn: Turn, requested: ToolCall): Promise<Admitted> {
  const { kernel } = run;
  // A call by Claude Code's name for a tool (`Skill`, `Read`) is a call of Keel's tool, judged and run as one.
  const tool = kernel.tools.get(requested.name) ?? kernel.tools.get(canonicalToolName(requested.name));
  const call = tool && tool.name !== requested.name ? { ...requested, name: tool.name } : requested;
  const available = () => kernel.tools.names().filter((name) => toolGiven(kernel, name)).join(', ');
  if (!tool) {
    return { call, result: errorBlock(call.id, `Unknown tool "${call.name}". Available tools: ${available()}`) };
  }
  if (!toolGiven(kernel, tool.name)) {
    return { call, result: errorBlock(call.id, `Tool "${call.name}" is not among the tools this agent was given (${available()}).`) };
  }
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) return { call, result: errorBlock(call.id, describeInputError(tool.name, parsed.error as ZodError)) };
  const checked: ToolCall = { ...call, input: parsed.data };
  const verdict = await decide(run, turn, checked, tool);
  // Interrupted while the permission check (or the user's answer) was pending: not a denial.
  if (run.signal.aborted) return { call, result: errorBlock(call.id, 'Interrupted by the user before this tool ran.') };
  if (verdict.behavior !== 'allow') {
    run.denials.push({ tool_name: call.name, tool_use_id: call.id, tool_input: parsed.data });
    return { call, result: errorBlock(call.id, verdict.reason) };
  }
  if (verdict.updatedInput !== undefined) {
    // The user (an SDK host) may allow the call with an edited input: it is validated like the model's.
    const updated = tool.input.safeParse(verdict.updatedInput);
    if (!updated.success) return { call, result: errorBlock(call.id, `The input the user approved is invalid: ${describeInputError(tool.name, updated.error as ZodError)}`) };
    return { call: { ...call, input: updated.data }, tool, input: updated.data };
  }
  return { call: checked, tool, input: parsed.data };
}

/** prePermission, then askUser for an `ask`. Fails closed: no decision, no answer or an error means deny. */
async function decide(
  run: RunState,
  turn: Turn,
  call: ToolCall,
  tool: ToolDefinition,
): Promise<{ behavior: 'allow'; updatedInput?: unknown } | { behavior: 'deny'; reason: string }> {
  const { kernel } = run;
  let decision: Decision | undefined;
  try {
    decision = await kernel.hooks.prePermission.promise(call, turn);
  } catch (err) {
    decision = { behavior: 'deny', reason: `permission check failed: ${errorMessage(err)}` };
  }
  if (!decision) decision = { behavior: 'deny', reason: `Permission denied: no permission policy allowed ${call.name}` };
  if (decision.behavior === 'allow') return { behavior: 'allow' };
  if (decision.behavior === 'deny') {
    // Published like an answer, so frontends show a refusal the user was never asked about.
    kernel.emit({ type: 'permission', call, decision, source: 'policy' });
    return { behavior: 'deny', reason: decision.reason };
  }
  let answer;
  try {
    answer = await kernel.hooks.askUser.promise(
      { kind: 'permission', call, tool, reason: decision.reason, preview: decision.preview, options: ['allow_once', 'allow_session', 'deny', 'deny_session'] },
      turn,
    );
  } catch (err) {
    kernel.log('error', `asking the user failed: ${errorMessage(err)}`, 'loop');
  }
  if (!answer || answer.kind !== 'permission') {
    const why = decision.reason ? ` (${decision.reason})` : '';
    const reason = `Permission denied: ${call.name} needs the user's approval${why}, and this run cannot ask the user. Do not retry the same call: find another way, or tell the user which approval is needed.`;
    kernel.emit({ type: 'permission', call, decision: { behavior: 'deny', reason }, source: 'askUser' });
    return { behavior: 'deny', reason };
  }
  const allowed = answer.choice === 'allow_once' || answer.choice === 'allow_session';
  const reason = `Permission denied by the user${answer.message ? `: ${answer.message}` : ''}`;
  kernel.emit({
    type: 'permission',
    call,
    decision: allowed ? { behavior: 'allow' } : { behavior: 'deny', reason },
    source: 'user',
    choice: answer.choice,
  });
  return allowed ? { behavior: 'allow', updatedInput: answer.updatedInput } : { behavior: 'deny', reason };
}

async function executeCall(run: RunState, turn: Turn, call: ToolCall, tool: ToolDefinition, input: unknown, ended: string[]): Promise<ToolResultBlockParam> {
  const { kernel, session } = run;
  // Calls queued behind one the user interrupted never start.
  if (run.signal.aborted) return errorBlock(call.id, 'Interrupted by the user before this tool ran.');
  const started = Date.now();
  kernel.emit({ type: 'tool_start', call, tool });
  kernel.state.set({ currentToolCall: call });
  let result: ToolResult;
  try {
    const answered = await kernel.hooks.toolExecute.promise(call, turn);
    result =
      answered ??
      (await tool.execute(input, {
        signal: turn.signal,
        session,
        turn,
        call,
        kernel,
        cwd: session.cwd,
        emit: (event) => kernel.emit(event),
      }));
  } catch (err) {
    result = run.signal.aborted
      ? { content: 'Interrupted by the user.', isError: true }
      : { content: `Error: ${errorMessage(err)}`, isError: true };
  }
  try {
    result = await kernel.hooks.toolResult.promise(result, call, turn);
  } catch (err) {
    result = { content: `Error while shaping the result: ${errorMessage(err)}`, isError: true };
  }
  if (result.spent) {
    const { usage, costUsd } = result.spent;
    run.usage = addUsage(run.usage, usage);
    run.costUsd += costUsd;
    kernel.state.set((state) => ({ tokenUsage: addUsage(state.tokenUsage, usage), cost: state.cost + costUsd }));
  }
  kernel.state.set({ currentToolCall: null });
  kernel.emit({ type: 'tool_end', call, result, durationMs: Date.now() - started });
  if (result.endRun) {
    ended.push(result.endRun.result);
    Object.assign(run.fields, result.endRun.fields);
  }
  return resultBlock(call.id, result);
}
