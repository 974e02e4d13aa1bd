/**
 * Claude Code's stream-json protocol: the message shapes `print` writes for `-p --output-format stream-json`,
 * the `sdk` frontend and `keel/sdk`'s `query()` speak, and their builders — one module, so they cannot drift.
 * Exported from `keel` as the `protocol` namespace.
 */
import { randomUUID } from 'node:crypto';
import { toolGiven } from './loop.js';
import type { Kernel } from './kernel.js';
import type { AgentEvent, MessageParam, QueryResponse, RunResult, Session } from './types.js';

export { PartialStream } from './stream-events.js';

/** One line of the protocol: `system` (`init`, `error`, `api_retry`, `compact_boundary`), `assistant`, `user`, `result`, `stream_event`, `control_*`. */
export interface OutMessage {
  type: 'system' | 'assistant' | 'user' | 'result' | 'stream_event' | 'control_request' | 'control_response';
  subtype?: string;
  session_id?: string | null;
  parent_tool_use_id?: string | null;
  [field: string]: unknown;
}

export function initMessage(kernel: Kernel, session: Session, extra: { agents?: string[] } = {}): OutMessage {
  return {
    type: 'system',
    subtype: 'init',
    session_id: session.id,
    cwd: session.cwd,
    model: session.model,
    // The tools this agent has: `--tools` / config `tools` leave the others out.
    tools: kernel.tools.names().filter((name) => toolGiven(kernel, name)),
    permissionMode: session.permissionMode,
    preset: session.preset,
    slash_commands: kernel.commands.names(),
    mcp_servers: [],
    agents: extra.agents ?? [],
    apiKeySource: 'none',
    output_style: 'default',
    parent_session_id: session.parentSessionId ?? null,
  };
}

export function assistantMessage(session: Session, response: QueryResponse): OutMessage {
  return {
    type: 'assistant',
    message: {
      id: response.id,
      type: 'message',
      role: 'assistant',
      model: response.model,
      content: response.content,
      stop_reason: response.stopReason,
      stop_sequence: response.stopSequence ?? null,
      usage: response.usage,
    },
    parent_tool_use_id: null,
    session_id: session.id,
  };
}

export function userMessage(session: Session, message: MessageParam): OutMessage {
  return { type: 'user', message: { role: 'user', content: message.content }, parent_tool_use_id: null, session_id: session.id };
}

/** `costUsd`: what to report as `total_cost_usd` (default the run's own cost); `modelUsage`: Claude Code's per-model totals (the usage service's). */
export function resultMessage(session: Session, result: RunResult, costUsd = result.costUsd, modelUsage: Record<string, unknown> = {}): OutMessage {
  return {
    uuid: randomUUID(),
    type: 'result',
    subtype: result.subtype,
    is_error: result.isError,
    duration_ms: result.durationMs,
    duration_api_ms: result.durationApiMs,
    num_turns: result.numTurns,
    // Keel's own: turns its sub-agents used under this run's limit, so a parent Keel charges them to its own.
    ...(result.toolTurns ? { subagent_turns: result.toolTurns } : {}),
    result: result.result,
    session_id: session.id,
    total_cost_usd: costUsd,
    usage: result.usage,
    modelUsage,
    stop_reason: result.stopReason,
    permission_denials: result.permissionDenials,
    ...(result.error ? { error: result.error, errors: [result.error] } : {}),
    ...result.fields,
  };
}

/** The line a run's event stands for (assistant turn, tool results, a sub-agent's line, retry, compaction), if any. */
export function eventMessage(session: Session, event: AgentEvent): OutMessage | undefined {
  switch (event.type) {
    case 'assistant_message':
      return assistantMessage(session, event.response);
    case 'tool_results':
      return userMessage(session, event.message);
    case 'subagent':
      // A grandchild's lines already carry the child's call id; a child's own lines get ours.
      return { ...event.message, type: event.message.type as OutMessage['type'], parent_tool_use_id: (event.message.parent_tool_use_id as string | null | undefined) ?? event.toolUseId };
    case 'retry':
      return { type: 'system', subtype: 'api_retry', attempt: event.attempt, max_retries: event.maxRetries, retry_delay_ms: event.delayMs, error: event.cause, session_id: session.id };
    case 'compact':
      return { type: 'system', subtype: 'compact_boundary', session_id: session.id, compact_metadata: { trigger: event.trigger === 'manual' ? 'manual' : 'auto', pre_tokens: event.preTokens } };
    default:
      return undefined;
  }
}

/** A problem with one input line or message; the session goes on. */
export function errorMessage(session: Session | undefined, message: string): OutMessage {
  return { type: 'system', subtype: 'error', error: message, session_id: session?.id ?? null };
}

export function controlRequest(requestId: string, request: Record<string, unknown>): OutMessage {
  return { type: 'control_request', request_id: requestId, request };
}

export function controlSuccess(requestId: string, response: Record<string, unknown> = {}): OutMessage {
  return { type: 'control_response', response: { subtype: 'success', request_id: requestId, response } };
}

export function controlError(requestId: string, error: string): OutMessage {
  return { type: 'control_response', response: { subtype: 'error', request_id: requestId, error } };
}
