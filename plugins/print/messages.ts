/** Claude Code's `-p` message shapes, so tools built for `claude -p` can read Keel's output. */
import { toolGiven, type Kernel, type MessageParam, type QueryResponse, type RunResult, type Session } from '../../kernel/index.js';

export function initMessage(kernel: Kernel, session: Session) {
  return {
    type: 'system',
    subtype: 'init',
    session_id: session.id,
    cwd: session.cwd,
    model: session.model,
    // The tools this agent has: `--tools` / config `tools` leave the others out (as the sdk frontend does).
    tools: kernel.tools.names().filter((name) => toolGiven(kernel, name)),
    permissionMode: session.permissionMode,
    preset: session.preset,
    slash_commands: kernel.commands.names(),
  };
}

export function assistantMessage(session: Session, response: QueryResponse) {
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

export function userMessage(session: Session, message: MessageParam) {
  return { type: 'user', message: { role: 'user', content: message.content }, parent_tool_use_id: null, session_id: session.id };
}

export function resultMessage(kernel: Kernel, session: Session, result: RunResult) {
  return {
    type: 'result',
    subtype: result.subtype,
    is_error: result.isError,
    duration_ms: result.durationMs,
    duration_api_ms: result.durationApiMs,
    num_turns: result.numTurns,
    result: result.result,
    session_id: session.id,
    total_cost_usd: kernel.state.get().cost || result.costUsd,
    usage: result.usage,
    stop_reason: result.stopReason,
    permission_denials: result.permissionDenials,
    ...(result.error ? { error: result.error } : {}),
  };
}
