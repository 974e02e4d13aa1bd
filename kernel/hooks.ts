import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from 'tapable';
import type {
  AgentEvent,
  Answer,
  Context,
  Decision,
  QueryRequest,
  QueryResponse,
  Question,
  Session,
  ToolCall,
  ToolDefinition,
  ToolResult,
  Turn,
  TurnRecord,
} from './types.js';

/**
 * Tap stages. Lower runs first; taps of equal stage run in registration order.
 * Use `before: 'plugin-name'` for a precise place.
 */
export const Stage = Object.freeze({
  FIRST: -1000,
  EARLY: -100,
  NORMAL: 0,
  LATE: 100,
  LAST: 1000,
});

/** Creates the frozen, typed hook map. The order here is the order of `describe()`. */
export function createHooks() {
  const hooks = makeHooks();
  for (const hook of Object.values(hooks)) shareCompiledCalls(hook as unknown as CompilingHook);
  return hooks;
}

function makeHooks() {
  return Object.freeze({
    /** Open or resume a session (the store fills `session.messages`); connect MCP servers; load the memory index. */
    sessionStart: new AsyncSeriesHook<[Session]>(['session']),
    /** ① Build this turn's context; each tap returns the context with its own sections appended. */
    contextLoad: new AsyncSeriesWaterfallHook<[Context, Turn]>(['context', 'turn']),
    /** ② Which tool definitions this request carries. */
    selectTools: new AsyncSeriesWaterfallHook<[ToolDefinition[], Turn]>(['tools', 'turn']),
    /** ③/⑥ First decision wins: `allow`, `deny` (with the reason the model sees) or `ask` (settled through `askUser`). No decision, or an error, means deny. */
    prePermission: new AsyncSeriesBailHook<[ToolCall, Turn], Decision | undefined>(['call', 'turn']),
    /** ④ Exactly one provider answers: the only step that calls a model. */
    query: new AsyncSeriesBailHook<[QueryRequest, Turn], QueryResponse | undefined>(['request', 'turn']),
    /** ⑥ Run one tool call; the registered tool's `execute` is the default when no tap answers. */
    toolExecute: new AsyncSeriesBailHook<[ToolCall, Turn], ToolResult | undefined>(['call', 'turn']),
    /** ⑥ Shape a result before it enters the messages. */
    toolResult: new AsyncSeriesWaterfallHook<[ToolResult, ToolCall, Turn]>(['result', 'call', 'turn']),
    /** ⑦ Token accounting, persistence, compaction check. A tap may set `record.followUp` to keep a finished run going. */
    postTurn: new AsyncSeriesHook<[TurnRecord, Turn]>(['record', 'turn']),
    /** Answered by the frontend (Ink UI, SDK host, headless policy). */
    askUser: new AsyncSeriesBailHook<[Question, Turn], Answer | undefined>(['question', 'turn']),
    /** Observation only, synchronous: deltas, tool start/end, retries, compaction, cost, logs. Errors are logged, never thrown. */
    event: new SyncHook<[AgentEvent]>(['event']),
  });
}

export type Hooks = ReturnType<typeof createHooks>;
export type HookName = keyof Hooks;

/** Hooks whose tap errors are logged and skipped instead of failing the run. */
export const FORGIVING_HOOKS: ReadonlySet<HookName> = new Set(['contextLoad', 'postTurn', 'event']);

interface CompileOptions {
  type: string;
  args: string[];
  taps: Array<{ type: string; fn: unknown; context?: boolean }>;
  interceptors: Array<Record<string, unknown>>;
}
interface CompilingHook {
  compile(options: CompileOptions): unknown;
  _x?: unknown[];
}

/** Interceptor methods that put code into a compiled call. */
const INTERCEPTOR_CODE = ['call', 'tap', 'loop', 'error', 'result', 'done', 'context'];
const compiledCalls = new Map<unknown, Map<string, unknown>>();

/**
 * tapable compiles a hook's call function (`new Function`) on its first call after its taps change, and Keel makes
 * hooks afresh for every kernel. The code depends only on the hook's kind, the call type, the argument names, each
 * tap's type and context flag and which interceptor methods exist; it reads the taps themselves from `this._x`. So
 * one compiled function serves every hook of the same shape, in this process and, through the start-up snapshot,
 * in every run the build's warm-up resembled. (tapable 2's `factory.setup` is the `_x` line below.)
 */
function shareCompiledCalls(hook: CompilingHook): void {
  const compile = hook.compile;
  let byShape = compiledCalls.get(compile);
  if (!byShape) compiledCalls.set(compile, (byShape = new Map()));
  const shapes = byShape;
  hook.compile = function (this: CompilingHook, options: CompileOptions) {
    const shape = [
      options.type,
      options.args.join(','),
      options.taps.map((tap) => `${tap.type}${tap.context ? '+context' : ''}`).join(','),
      `${options.interceptors.length}:${options.interceptors.map((interceptor) => INTERCEPTOR_CODE.filter((key) => interceptor[key] !== undefined).join('+')).join(',')}`,
    ].join('|');
    const shared = shapes.get(shape);
    if (shared) {
      this._x = options.taps.map((tap) => tap.fn);
      return shared;
    }
    const made = compile.call(this, options);
    shapes.set(shape, made);
    return made;
  };
}
