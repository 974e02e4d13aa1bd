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
