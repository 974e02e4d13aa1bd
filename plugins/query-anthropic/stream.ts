/** One streamed attempt: deltas out as events, the final message back, or a failure the retry policy can read. */
import type Anthropic from '@anthropic-ai/sdk';
import { errorMessage, isAbortError, type AgentEvent } from '../../kernel/index.js';
import { ALIVE } from './transport.js';

export interface AttemptContext {
  signal: AbortSignal;
  alive(): void;
  /** The retry policy's watched fetch; unused here: the transport calls `alive` on every chunk itself. */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

export interface AttemptOptions {
  /** Emit text, thinking and tool-input deltas (main tier only). */
  visible: boolean;
  emit(event: AgentEvent): void;
}

/**
 * Streams one Messages API call. A message is returned only when the stream reached its end with a
 * stop reason: a partial message is never returned, so no tool call from it can run. When the stream
 * breaks after its headers the error is marked `retryable`, and any text already shown is withdrawn.
 */
export async function streamAttempt(
  client: Anthropic,
  params: Anthropic.MessageStreamParams,
  ctx: AttemptContext,
  opts: AttemptOptions,
): Promise<Anthropic.Message> {
  // Every byte the transport receives feeds the idle watchdog (pings included), without a per-attempt client.
  const stream = client.messages.stream(params, { signal: ctx.signal, fetchOptions: { [ALIVE]: ctx.alive } as object });
  let connected = false;
  let shown = false;
  const toolIds = new Map<number, string>();
  stream.on('connect', () => {
    connected = true;
    ctx.alive();
  });
  stream.on('streamEvent', (event) => {
    ctx.alive();
    if (!opts.visible) return;
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') toolIds.set(event.index, event.content_block.id);
    if (event.type !== 'content_block_delta') return;
    const delta = event.delta;
    if (delta.type === 'text_delta') {
      shown = true;
      opts.emit({ type: 'text_delta', text: delta.text, index: event.index });
    } else if (delta.type === 'thinking_delta') {
      shown = true;
      opts.emit({ type: 'thinking_delta', text: delta.thinking, index: event.index });
    } else if (delta.type === 'input_json_delta') {
      shown = true;
      opts.emit({ type: 'tool_input_delta', partialJson: delta.partial_json, index: event.index, toolUseId: toolIds.get(event.index) });
    }
  });
  try {
    const message = await stream.finalMessage();
    if (!message.stop_reason) throw new Error('the stream ended before the message was complete');
    return message;
  } catch (err) {
    if (shown) opts.emit({ type: 'withdraw', reason: `the response stream failed: ${errorMessage(err)}` });
    if (connected && !isAbortError(err) && typeof (err as { status?: unknown }).status !== 'number' && !permanentErrorEvent(err)) throw brokenStream(err);
    throw err;
  }
}

/** Error types an `error` event can carry that a retry of the same request cannot fix. */
const PERMANENT_ERROR_TYPES = new Set(['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'request_too_large']);

/** True for an `error` event mid-stream whose type says the request itself is at fault. */
function permanentErrorEvent(err: unknown): boolean {
  const body = (err as { error?: { type?: unknown; error?: { type?: unknown } } }).error;
  const type = body?.error?.type ?? body?.type;
  return typeof type === 'string' && PERMANENT_ERROR_TYPES.has(type);
}

/** A stream that failed after its headers: cut, malformed event, error event mid-stream, early end. */
function brokenStream(cause: unknown): Error {
  return Object.assign(new Error(`the response stream broke: ${errorMessage(cause)}`, { cause }), { name: 'StreamBrokenError', retryable: true });
}
