/** One streamed attempt: deltas out as events, the final message back, or a failure the retry policy can read. */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessagesLike } from './client.js';
import { errorMessage, isAbortError, KeelError, type AgentEvent } from '../../kernel/index.js';
import { MessageAccumulator } from './accumulate.js';
import { PREBUILT, type PrebuiltPart } from './body.js';
import { SseDecoder, type ServerSentEvent } from './sse.js';
import { ALIVE, ATTEMPT_SIGNAL } from './transport.js';

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
  /** Names the endpoint and what to check in errors (a cloud platform); the Anthropic API by default. */
  endpoint?: { label: string; hint: string };
  /** True once the user stopped the request: its cut answer is not withdrawn with a message, the UI says interrupted. */
  cancelled?(): boolean;
  /** Where an event whose data is not JSON is described (the kernel log at debug level). */
  log?(message: string): void;
  /** `anthropic-beta` values the request needs (the 1M context window of a `[1m]` model). */
  betas?: string[];
}

/**
 * Streams one Messages API call: the SDK sends the request (`messages.create` with `stream: true`) and checks the
 * answer's status; the body's events are read here (sse.ts) and folded into the message (accumulate.ts), as the
 * SDK's `Stream` would yield them: pings and unnamed events skipped, an `error` event thrown as the API error it
 * carries, an aborted body ending the stream quietly. A message is returned only when the stream reached its end
 * with a stop reason: a partial message is never returned, so no tool call from it can run. When the stream breaks
 * after its headers the error is marked `retryable`, and any text already shown is withdrawn.
 */
export async function streamAttempt(
  client: MessagesLike,
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
  const fetchOptions = { [ALIVE]: alive, [ATTEMPT_SIGNAL]: ctx.signal, ...(opts.prebuilt ? { [PREBUILT]: opts.prebuilt } : {}) } as object;
  let response: Response | undefined;
  let shown = false;
  const toolIds = new Map<number, string>();
  const accumulator = new MessageAccumulator();
  let stopped = false;
  const apply = (sse: ServerSentEvent) => {
    if (stopped) return;
    const event = eventOf(sse, response!, opts.log);
    if (!event) return;
    ctx.alive();
    ctx.progress?.();
    accumulator.add(event);
    if (event.type === 'message_stop') stopped = true;
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
  };
  try {
    // The attempt's signal reaches the transport through `fetchOptions` (see ATTEMPT_SIGNAL), not the SDK.
    response = await client.messages.create(params, { fetchOptions, ...(opts.betas?.length ? { headers: { 'anthropic-beta': opts.betas.join(',') } } : {}) }).asResponse();
    ctx.alive();
    const decoder = new SseDecoder();
    try {
      const body = bodyOf(response);
      for await (const chunk of body) {
        for (const sse of decoder.push(chunk)) apply(sse);
        if (!stopped) continue;
        // `message_stop` completes the attempt, whether or not the body ends (a content-length that never fills,
        // a chunked body without its last chunk): the connection gets a moment to end cleanly, else it is dropped.
        (body as { settle?: () => void }).settle?.();
        break;
      }
      if (!stopped) for (const sse of decoder.end()) apply(sse);
    } catch (err) {
      // The SDK ends an aborted stream quietly (below: an aborted attempt fails, an unfinished one is incomplete).
      if (!(err instanceof Object && (err as { name?: unknown }).name === 'AbortError')) throw err;
    }
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    return accumulator.final();
  } catch (caught) {
    // Aborted before the headers, the SDK (which was given no signal) reports a failed connection: it was an abort.
    if (ctx.signal.aborted && !isAbortError(caught)) caught = abortError(ctx.signal);
    const unexpected = ctx.signal.aborted ? undefined : notAStream(response, head, opts.endpoint);
    const err = unexpected ?? caught;
    if (shown && !opts.cancelled?.()) opts.emit({ type: 'withdraw', reason: `the response stream failed: ${errorMessage(err)}` });
    if (unexpected) throw unexpected;
    if (response && !isAbortError(err) && typeof (err as { status?: unknown }).status !== 'number' && !permanentErrorEvent(err)) throw brokenStream(err);
    throw err;
  }
}

/** The body's chunks: the transport's body is an async iterable; a web stream (another fetch) is one too. */
function bodyOf(response: Response): AsyncIterable<Uint8Array> {
  if (!response.body) throw new Error('Attempted to iterate over a response with no body');
  return response.body as unknown as AsyncIterable<Uint8Array>;
}

/**
 * The stream event an SSE event carries, or undefined for one to skip. An `error` event throws the error it
 * carries (shaped as the SDK's `APIError` for a stream: no status, the body as `error`); data that is not JSON
 * throws, after saying what it was.
 */
function eventOf(sse: ServerSentEvent, response: Response, log: ((message: string) => void) | undefined): Anthropic.RawMessageStreamEvent | undefined {
  if (sse.event === null || sse.event === 'ping') return undefined;
  if (sse.event === 'error') {
    let body: unknown = sse.data;
    try {
      body = JSON.parse(sse.data);
    } catch {
      // not JSON: the error is the text itself
    }
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    throw Object.assign(new Error(text), { name: 'APIError', status: undefined, error: body, headers: response.headers });
  }
  if (!sse.data) return undefined;
  try {
    return JSON.parse(sse.data) as Anthropic.RawMessageStreamEvent;
  } catch (err) {
    log?.(`Could not parse message into JSON: ${sse.data}`);
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
function notAStream(response: Response | null | undefined, head: BodyHead, endpoint = { label: 'the Anthropic API', hint: 'ANTHROPIC_BASE_URL / baseURL' }): KeelError | undefined {
  if (!response || !response.ok) return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('text/event-stream')) return undefined;
  const start = head.text().replace(/\s+/g, ' ').trim();
  return new KeelError(
    `${endpoint.label} answered HTTP ${response.status} with ${type ? `content-type ${type}` : 'no content-type'} instead of an event stream; ` +
      `the body begins: ${JSON.stringify(start)}${head.total > HEAD_BYTES ? ` (${head.total} bytes in all)` : ''}; check ${endpoint.hint}`,
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
