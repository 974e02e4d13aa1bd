/**
 * The stream-json message shapes of Claude Code's protocol. The `print` plugin writes the same shapes for
 * `-p --output-format stream-json`; plugins never import each other, so the few builders both need live in
 * each (they are format glue, not logic).
 */
import { toolGiven, type Kernel, type MessageParam, type QueryResponse, type RunResult, type Session } from '../../kernel/index.js';

export type OutMessage = Record<string, unknown>;

export function initMessage(kernel: Kernel, session: Session, extra: { agents?: string[] } = {}): OutMessage {
  return {
    type: 'system',
    subtype: 'init',
    session_id: session.id,
    cwd: session.cwd,
    model: session.model,
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

export function resultMessage(session: Session, result: RunResult): OutMessage {
  return {
    type: 'result',
    subtype: result.subtype,
    is_error: result.isError,
    duration_ms: result.durationMs,
    duration_api_ms: result.durationApiMs,
    num_turns: result.numTurns,
    result: result.result,
    session_id: session.id,
    total_cost_usd: result.costUsd,
    usage: result.usage,
    stop_reason: result.stopReason,
    permission_denials: result.permissionDenials,
    ...(result.error ? { error: result.error } : {}),
  };
}

/** A problem with one input line or message; the session goes on. */
export function errorMessage(session: Session | undefined, message: string): OutMessage {
  return { type: 'system', subtype: 'error', error: message, session_id: session?.id ?? null };
}

export function controlSuccess(requestId: string, response: Record<string, unknown> = {}): OutMessage {
  return { type: 'control_response', response: { subtype: 'success', request_id: requestId, response } };
}

export function controlError(requestId: string, error: string): OutMessage {
  return { type: 'control_response', response: { subtype: 'error', request_id: requestId, error } };
}
