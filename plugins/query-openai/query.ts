/** The OpenAI-compatible provider's requests: its client, the streamed Chat Completions call, its errors. */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { isAbortError, KeelError, ContextOverflowError, type Kernel, type QueryRequest, type QueryResponse, type Turn } from '../../kernel/index.js';
import type { OpenAISettings, QueryOpenAIOptions } from './index.js';
import { chatAttempt, type AttemptOptions } from './stream.js';
import { toChatMessages, toChatTools } from './translate.js';

const NAME = 'query-openai';

/** Answers one request with the given settings. */
export type OpenAIQuery = (request: QueryRequest, turn: Turn, settings: OpenAISettings) => Promise<QueryResponse>;

/** The provider's requests through one client, made on the first request from the plugin's options and the config. */
export function openAIQuery(kernel: Kernel, opts: QueryOpenAIOptions): OpenAIQuery {
  let client: OpenAI | undefined;
  let fetch: AttemptOptions['fetch'];
  const getClient = async (): Promise<OpenAI> => {
    if (client) return client;
    const { default: OpenAIClient } = await import('openai');
    // Through the `network` service when a proxy or a client certificate is set (it loads nothing otherwise).
    const network = await kernel.services.get('network')?.load();
    if (network) fetch = (input, init) => network.fetch(input, init, { identity: true });
    client = new OpenAIClient({
      ...(fetch ? { fetch } : {}),
      // Local servers (Ollama, llama.cpp) take no key, but the client insists on one.
      apiKey: opts.apiKey ?? kernel.config.apiKey ?? process.env.OPENAI_API_KEY ?? 'none',
      baseURL: opts.baseURL ?? kernel.config.baseURL ?? process.env.OPENAI_BASE_URL,
      maxRetries: 0,
      logger: sdkLogger(kernel),
    });
    return client;
  };
  return async (request, turn, settings) => query(kernel, await getClient(), request, turn, settings, fetch);
}

/** The client's own logging goes to the kernel log at debug level; failures reach the user once, as errors. */
function sdkLogger(kernel: Kernel) {
  const log = (message: string, ...rest: unknown[]) =>
    kernel.log('debug', [message, ...rest.map((r) => (typeof r === 'string' ? r : JSON.stringify(r)))].join(' '), NAME);
  return { error: log, warn: log, info: log, debug: log };
}

export function buildChatParams(request: QueryRequest, settings: OpenAISettings): ChatCompletionCreateParamsStreaming {
  const tools = toChatTools(request.tools);
  return {
    model: request.model,
    messages: toChatMessages(request.system, request.messages),
    ...(tools.length ? { tools } : {}),
    [settings.maxTokensField]: request.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
  };
}

async function query(kernel: Kernel, client: OpenAI, request: QueryRequest, turn: Turn, settings: OpenAISettings, fetch: AttemptOptions['fetch']): Promise<QueryResponse> {
  const params = buildChatParams(request, settings);
  const signal = request.signal ?? turn.signal;
  const attemptOpts = { visible: request.tier === 'main' && request.stream !== false, emit: turn.emit, cancelled: () => signal.aborted, ...(fetch ? { fetch } : {}) };
  const retry = kernel.services.get('retry');
  let result;
  try {
    result = retry
      ? await retry.run((attempt) => chatAttempt(client, params, attempt, attemptOpts), { signal, emit: turn.emit, label: 'OpenAI-compatible API', url: client.baseURL })
      : await chatAttempt(client, params, { signal, alive: () => undefined }, attemptOpts);
  } catch (err) {
    throw mapError(err, request.model);
  }
  const costUsd = kernel.services.get('usage')?.record({ session: turn.session, model: result.model, tier: request.tier, usage: result.usage });
  turn.emit({ type: 'usage', usage: result.usage, costUsd: costUsd ?? 0, model: result.model, tier: request.tier });
  return {
    id: result.id,
    model: result.model,
    content: result.content,
    stopReason: result.stopReason,
    usage: result.usage,
    ...(costUsd !== undefined ? { costUsd } : {}),
  };
}

/** The `network` plugin's one-line refusals (a proxy, a client certificate), found among the causes. */
function networkRefusal(err: unknown): unknown {
  for (let cur: unknown = err, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && /^ERR_(PROXY_|CLIENT_CERT)/.test(code)) return cur instanceof KeelError ? cur : new KeelError(String((cur as Error).message), { code, cause: err });
  }
  return undefined;
}

function mapError(err: unknown, model: string): unknown {
  if (isAbortError(err) || err instanceof KeelError || typeof err !== 'object' || err === null) return err;
  const e = err as { status?: unknown; message?: unknown; error?: { message?: unknown } };
  if (typeof e.status !== 'number') return networkRefusal(err) ?? err;
  const message = typeof e.error?.message === 'string' ? e.error.message : String(e.message);
  if (e.status === 400 && /context length|context window|too many tokens|prompt is too long|maximum context/i.test(message)) return new ContextOverflowError(message);
  if (e.status === 401) return new KeelError(`invalid API key: the OpenAI-compatible server answered 401 (${message}); set \`apiKey\` in agent.config.ts or OPENAI_API_KEY`, { code: 'auth', cause: err });
  if (e.status === 403) return new KeelError(`permission denied: the OpenAI-compatible server answered 403 (${message})`, { code: 'auth', cause: err });
  if (e.status === 404) return new KeelError(`model "${model}" not found (the server answered 404: ${message}); check \`model\`, \`smallModel\` and \`baseURL\``, { cause: err });
  return new KeelError(`the OpenAI-compatible server refused the request: HTTP ${e.status}: ${message}`, { code: e.status === 400 ? 'invalid_request' : undefined, cause: err });
}
