/** One streamed Chat Completions attempt, accumulated into an Anthropic-shaped message. */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { errorMessage, isAbortError, type AgentEvent, type ContentBlock, type TokenUsage } from '../../kernel/index.js';
import { toStopReason } from './translate.js';

export interface AttemptContext {
  signal: AbortSignal;
  alive(): void;
  /** Feeds the retry policy's progress deadline (keep-alive comments never reach us). */
  progress?(): void;
  /** The retry policy's watched fetch: every byte received (keep-alive comments included) feeds its idle watchdog. */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** The same watching around another fetch. */
  watch?(inner: (input: string | URL | Request, init?: RequestInit) => Promise<Response>): (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

export interface AttemptOptions {
  visible: boolean;
  emit(event: AgentEvent): void;
  /** The `network` service's fetch (a proxy, a client certificate), when one is set. */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** True once the user stopped the request: its cut answer is not withdrawn with a message, the UI says interrupted. */
  cancelled?(): boolean;
}

export interface ChatResult {
  id: string | undefined;
  model: string;
  content: ContentBlock[];
  stopReason: ReturnType<typeof toStopReason>;
  usage: TokenUsage;
}

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

/**
 * A result comes back only when the stream sent a finish reason: a stream that ends without one is
 * incomplete, is marked `retryable`, and its partial text is withdrawn. No tool call from it is returned.
 */
export async function chatAttempt(client: OpenAI, params: ChatCompletionCreateParamsStreaming, ctx: AttemptContext, opts: AttemptOptions): Promise<ChatResult> {
  let connected = false;
  let shown = false;
  try {
    const watched = opts.fetch ? ctx.watch?.(opts.fetch) : ctx.fetch;
    const api = watched ? client.withOptions({ fetch: watched }) : client;
    const stream = await api.chat.completions.create(params, { signal: ctx.signal });
    connected = true;
    ctx.alive();
    let id: string | undefined;
    let model = params.model;
    let text = '';
    let finish: string | undefined;
    let usage: TokenUsage | undefined;
    const calls = new Map<number, PendingCall>();
    const textIndex = 0;
    for await (const chunk of stream) {
      ctx.alive();
      ctx.progress?.();
      id ??= chunk.id;
      if (chunk.model) model = chunk.model;
      if (chunk.usage) usage = toUsage(chunk.usage);
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      const reasoning = (delta as { reasoning_content?: unknown; reasoning?: unknown }).reasoning_content ?? (delta as { reasoning?: unknown }).reasoning;
      if (typeof reasoning === 'string' && reasoning && opts.visible) {
        shown = true;
        opts.emit({ type: 'thinking_delta', text: reasoning, index: textIndex });
      }
      if (typeof delta.content === 'string' && delta.content) {
        text += delta.content;
        if (opts.visible) {
          shown = true;
          opts.emit({ type: 'text_delta', text: delta.content, index: textIndex });
        }
      }
      for (const call of delta.tool_calls ?? []) {
        let pending = calls.get(call.index);
        if (!pending) {
          pending = { id: call.id ?? `call_${call.index}_${Date.now().toString(36)}`, name: '', args: '' };
          calls.set(call.index, pending);
        }
        if (call.id) pending.id = call.id;
        if (call.function?.name) pending.name += call.function.name;
        if (call.function?.arguments) {
          pending.args += call.function.arguments;
          if (opts.visible) {
            shown = true;
            opts.emit({ type: 'tool_input_delta', partialJson: call.function.arguments, index: call.index + 1, toolUseId: pending.id });
          }
        }
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (!finish) throw new Error('the stream ended without a finish reason');
    const content: ContentBlock[] = [];
    if (text) content.push({ type: 'text', text, citations: null });
    for (const index of [...calls.keys()].sort((a, b) => a - b)) {
      const call = calls.get(index)!;
      content.push({ type: 'tool_use', id: call.id, name: call.name, input: parseArguments(call.args), caller: { type: 'direct' } });
    }
    return {
      id,
      model,
      content,
      stopReason: toStopReason(finish, calls.size > 0),
      usage: usage ?? { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
  } catch (err) {
    if (shown && !opts.cancelled?.()) opts.emit({ type: 'withdraw', reason: `the response stream failed: ${errorMessage(err)}` });
    if (connected && !isAbortError(err) && typeof (err as { status?: unknown }).status !== 'number') {
      throw Object.assign(new Error(`the response stream broke: ${errorMessage(err)}`, { cause: err }), { name: 'StreamBrokenError', retryable: true });
    }
    throw err;
  }
}

/** Arguments that are not a JSON object reach the tool as the raw string, so its input check names the problem. */
function parseArguments(args: string): unknown {
  if (!args.trim()) return {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

function toUsage(usage: OpenAI.CompletionUsage): TokenUsage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage.prompt_tokens ?? 0) - cached),
    output_tokens: usage.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}
