import { definePlugin, isAbortError, ContextOverflowError, KeelError, type QueryRequest, type QueryResponse, type Turn, type Kernel } from '../../kernel/index.js';
import type Anthropic from '@anthropic-ai/sdk';

export interface QueryAnthropicOptions {
  /** Override the API key (otherwise config `apiKey`, `ANTHROPIC_API_KEY`, `$KEEL_HOME/auth.json`). */
  apiKey?: string;
  /** Override the endpoint (otherwise config `baseURL` or `ANTHROPIC_BASE_URL`). */
  baseURL?: string;
}

/** Streams Messages API calls through @anthropic-ai/sdk and answers the `query` hook. */
export default definePlugin((opts: QueryAnthropicOptions = {}) => ({
  name: 'query-anthropic',
  kernel: '^1.0.0',
  apply(kernel) {
    let client: Anthropic | undefined;
    const getClient = async (): Promise<Anthropic> => {
      if (client) return client;
      const { default: AnthropicClient } = await import('@anthropic-ai/sdk');
      client = new AnthropicClient({
        apiKey: opts.apiKey ?? kernel.config.apiKey ?? process.env.ANTHROPIC_API_KEY ?? 'missing',
        baseURL: opts.baseURL ?? kernel.config.baseURL ?? process.env.ANTHROPIC_BASE_URL,
        maxRetries: 0,
      });
      return client;
    };

    kernel.hooks.query.tapPromise('query-anthropic', async (request, turn) => {
      if ((kernel.config.provider ?? 'anthropic') !== 'anthropic') return undefined;
      return streamMessage(kernel, await getClient(), request, turn);
    });

    kernel.services.provide('auth', {
      async verify(apiKey: string) {
        const { default: AnthropicClient } = await import('@anthropic-ai/sdk');
        const probe = new AnthropicClient({ apiKey, baseURL: opts.baseURL ?? kernel.config.baseURL, maxRetries: 0 });
        await probe.models.list({ limit: 1 });
      },
    });
  },
}));

async function streamMessage(kernel: Kernel, client: Anthropic, request: QueryRequest, turn: Turn): Promise<QueryResponse> {
  const visible = request.tier === 'main' && request.stream !== false;
  const params: Anthropic.MessageStreamParams = {
    model: request.model,
    max_tokens: request.maxTokens,
    system: request.system,
    messages: request.messages,
    ...(request.tools.length ? { tools: request.tools } : {}),
    ...(request.thinking ? { thinking: { type: 'enabled', budget_tokens: request.thinking.budget_tokens } } : {}),
  };
  try {
    const stream = client.messages.stream(params, { signal: request.signal ?? turn.signal });
    if (visible) {
      stream.on('streamEvent', (event) => {
        if (event.type !== 'content_block_delta') return;
        const delta = event.delta;
        if (delta.type === 'text_delta') kernel.emit({ type: 'text_delta', text: delta.text, index: event.index });
        else if (delta.type === 'thinking_delta') kernel.emit({ type: 'thinking_delta', text: delta.thinking, index: event.index });
        else if (delta.type === 'input_json_delta') kernel.emit({ type: 'tool_input_delta', partialJson: delta.partial_json, index: event.index });
      });
    }
    const message = await stream.finalMessage();
    return {
      id: message.id,
      model: message.model,
      content: message.content,
      stopReason: message.stop_reason,
      stopSequence: message.stop_sequence,
      usage: {
        input_tokens: message.usage.input_tokens ?? 0,
        output_tokens: message.usage.output_tokens ?? 0,
        cache_creation_input_tokens: message.usage.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: message.usage.cache_read_input_tokens ?? 0,
      },
    };
  } catch (err) {
    if (isAbortError(err)) throw err;
    const status = (err as { status?: number }).status;
    const message = (err as { message?: string }).message ?? String(err);
    if (status === 400 && /prompt is too long|context window/i.test(message)) throw new ContextOverflowError(message);
    if (status === 401) throw new KeelError('invalid API key (the API answered 401): set ANTHROPIC_API_KEY or run keel login');
    if (status === 403) throw new KeelError(`the API key lacks permission for this request (403): ${message}`);
    throw err;
  }
}
