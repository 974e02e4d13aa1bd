/** One streamed attempt: deltas out as events, the final message back, or a failure the retry policy can read. */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessagesClient } from './client.js';
import { errorMessage, isAbortError, KeelError, type AgentEvent } from '../../kernel/index.js';
import { MessageAccumulator } from './accumulate.js';
import { PREBUILT, type PrebuiltPart } from './body.js';
import { ALIVE } from './transport.js';

export interface AttemptContext {
  signal: AbortSignal;
  alive(): void;
  /** Feeds the retry policy's progress deadline: called on every event (the SDK drops pings before us). */
  progress?(): void;
  /** The retry policy's watched fetch; unused here: the transport calls `alive` on every chunk itself. */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

export interface AttemptOptions {
  /** Emit text, thinking and tool-input deltas (main tier only). */
  visible: boolean;
  /** The bytes of the parts of `params` that serialise as placeholders (body.ts). */
  prebuilt?: PrebuiltPart[];
  emit(event: AgentEvent): void;
}

/**
 * Streams one Messages API call: the SDK's raw event stream (`messages.create` with `stream: true`), folded into
 * the message here (accumulate.ts). A message is returned only when the stream reached its end with a stop
 * reason: a partial message is never returned, so no tool call from it can run. When the stream breaks after its
 * headers the error is marked `retryable`, and any text already shown is withdrawn.
 */
export async function streamAttempt(
  client: MessagesClient,
  params: Anthropic.MessageCreateParamsStreaming,
  ctx: AttemptContext,
  opts: AttemptOptions,
): Promise<Anthropic.Message> {
  const head = new BodyHead();
  // Every byte the transport receives feeds the idle watchdog (pings included), without a per-attempt client;
  // the first bytes are kept to describe an answer that is not an event stream.
  const alive = (chunk?: Uint8Array) => {
    ctx.alive();
    if (chunk) head.add(chunk);
  };
  const fetchOptions = { [ALIVE]: alive, ...(opts.prebuilt ? { [PREBUILT]: opts.prebuilt } : {}) } as object;
  let response: Response | undefined;
  let shown = false;
  const toolIds = new Map<number, string>();
  try {
    const answer = await client.messages.create(params, { signal: ctx.signal, fetchOptions }).withResponse();
    response = answer.response;
    ctx.alive();
    const accumulator = new MessageAccumulator();
    for await (const event of answer.data) {
      ctx.alive();
      ctx.progress?.();
      accumulator.add(event);
      if (!opts.visible) continue;
      if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') toolIds.set(event.index, event.content_block.id);
      if (event.type !== 'content_block_delta') continue;
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
    }
    // The SDK ends an aborted stream quietly: an aborted attempt must fail, never look complete.
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    return accumulator.final();
  } catch (caught) {
    const unexpected = notAStream(response, head);
    const err = unexpected ?? caught;
    if (shown) opts.emit({ type: 'withdraw', reason: `the response stream failed: ${errorMessage(err)}` });
    if (unexpected) throw unexpected;
    if (response && !isAbortError(err) && typeof (err as { status?: unknown }).status !== 'number' && !permanentErrorEvent(err)) throw brokenStream(err);
    throw err;
  }
}

function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('Request was aborted.', { cause: signal.reason }), { name: 'AbortError' });
}

/** The first bytes of a body kept to describe an answer that is not an event stream. */
const HEAD_BYTES = 200;

class BodyHead {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  add(chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    if (this.kept >= HEAD_BYTES) return;
    const part = Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, HEAD_BYTES - this.kept));
    this.chunks.push(Buffer.from(part));
    this.kept += part.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * A 2xx answer that is not an event stream (an HTML page from a proxy, a JSON body): the SDK would only say the
 * request "ended without sending any chunks", so say what came back instead. Not retried: the same endpoint
 * would answer the same way.
 */
function notAStream(response: Response | null | undefined, head: BodyHead): KeelError | undefined {
  if (!response || !response.ok) return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('text/event-stream')) return undefined;
  const start = head.text().replace(/\s+/g, ' ').trim();
  return new KeelError(
    `the Anthropic API answered HTTP ${response.status} with ${type ? `content-type ${type}` : 'no content-type'} instead of an event stream; ` +
      `the body begins: ${JSON.stringify(start)}${head.total > HEAD_BYTES ? ` (${head.total} bytes in all)` : ''}; check ANTHROPIC_BASE_URL / baseURL`,
    { code: 'bad_response' },
  );
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
