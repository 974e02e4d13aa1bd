import type Anthropic from '@anthropic-ai/sdk';
import type { MessagesClient, MessagesLike } from './client.js';
import { definePlugin, KeelError, type Kernel, type QueryRequest, type QueryResponse, type StopReason, type Turn } from '../../kernel/index.js';
import { prebuild, prebuildTools } from './body.js';
import { placeBreakpoints } from './cache.js';
import { mapError } from './errors.js';
import { streamAttempt, type AttemptOptions } from './stream.js';
import { nodeFetch, ROUTE } from './transport.js';
import type { Platform } from './errors.js';
import { claudeModel } from './platform-models.js';
import { tapCloudProvider, type CloudProvider } from './cloud.js';

/**
 * What the provider offers the cloud providers (query-bedrock, query-vertex): the plugin that brings a platform's SDK
 * registers itself, and its requests go through the same code as this plugin's own — caching breakpoints, streaming
 * events, the retry service, usage and cost — with the platform's model ids, switch and error hints (cloud.ts).
 */
export interface AnthropicMessagesService {
  /**
   * Makes the calling plugin the provider for its platform: switched on by config `provider` or Claude Code's switch
   * (CLAUDE_CODE_USE_BEDROCK, …), answering `query` ahead of this plugin, its client built on the first request with
   * retries off (the retry service's), Keel's transport as `fetch` (through the `network` service's routes when a
   * plugin offers one) and the SDK's own logging in the kernel log at debug level.
   */
  cloudProvider<S>(provider: CloudProvider<S>): void;
}

export type { ClientOptions, CloudClient, CloudProvider } from './cloud.js';
export type { Platform } from './errors.js';
export type { CloudPlatform } from './platform-models.js';

declare module '../../kernel/types.js' {
  interface Services {
    'anthropic-messages': AnthropicMessagesService;
  }
}
import { apiModel, MODEL_ALIASES, resolveModelAlias } from './models.js';

export interface QueryAnthropicOptions {
  /** Override the API key (otherwise config `apiKey`, `ANTHROPIC_API_KEY`, `$KEEL_HOME/auth.json`). */
  apiKey?: string;
  /** Override the endpoint (otherwise config `baseURL` or `ANTHROPIC_BASE_URL`). */
  baseURL?: string;
  /** Place `cache_control` breakpoints (default true). */
  promptCaching?: boolean;
}

const NAME = 'query-anthropic';

/**
 * Answers the `query` hook when config `provider` is `anthropic` (the default): streams Messages API calls
 * through @anthropic-ai/sdk (with its own retries off), runs every call through the `retry` service when
 * one is registered, places prompt-cache breakpoints, and records usage through the `usage` service.
 */
export default definePlugin((opts: QueryAnthropicOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    // `--model sonnet` and the like: the config holds the model id from here on, so the session, the status line,
    // pricing, the context window and `keel config` (which names the alias) all see it.
    if ((kernel.config.provider ?? 'anthropic') === 'anthropic') {
      for (const key of ['model', 'smallModel'] as const) {
        const name = kernel.config[key];
        const id = typeof name === 'string' ? resolveModelAlias(name) : name;
        if (id === name) continue;
        kernel.config[key] = id;
        kernel.config.sources[key] = `${kernel.config.sources[key] ?? 'default'}, alias ${name}`;
      }
    }
    kernel.services.provide('model-aliases', { table: MODEL_ALIASES, resolve: resolveModelAlias });
    let client: MessagesClient | undefined;
    // A key given by /login while Keel runs (auth.use): it replaces the configured one for the rest of the process.
    let loggedIn: string | undefined;
    const getClient = async (): Promise<MessagesClient> => {
      if (client) return client;
      const { MessagesClient } = await import('./client.js');
      const fetch = await networkFetch(kernel);
      client = new MessagesClient({
        apiKey: loggedIn ?? opts.apiKey ?? kernel.config.apiKey ?? process.env.ANTHROPIC_API_KEY ?? 'missing',
        baseURL: opts.baseURL ?? kernel.config.baseURL ?? process.env.ANTHROPIC_BASE_URL,
        maxRetries: 0,
        logger: sdkLogger(kernel),
        fetch,
        // Tracing costs start-up time and a pass over every message per request; opt in with ANTHROPIC_OPEN_TELEMETRY.
        ...(tracing() ? {} : { openTelemetry: false }),
      });
      return client;
    };

    kernel.hooks.query.tapPromise(NAME, async (request, turn) => {
      if ((kernel.config.provider ?? 'anthropic') !== 'anthropic') return undefined;
      return query(kernel, await getClient(), request, turn, opts.promptCaching ?? true);
    });

    kernel.services.provide('anthropic-messages', {
      cloudProvider: (provider) =>
        tapCloudProvider(
          kernel,
          provider,
          (plugin) => ({
            maxRetries: 0,
            // Through the network service's routes (proxies, client certificates), decided on each request.
            fetch: (input, init) => networkFetch(kernel).then((send) => send(input, init)),
            logger: sdkLogger(kernel, plugin),
          }),
          (client, request, turn, platform) => query(kernel, client, request, turn, opts.promptCaching ?? true, platform),
        ),
    });

    const auth = {
      async verify(apiKey: string) {
        const { MessagesClient } = await import('./client.js');
        const probe = new MessagesClient({ apiKey, baseURL: opts.baseURL ?? kernel.config.baseURL, maxRetries: 0, logger: sdkLogger(kernel), fetch: await networkFetch(kernel) });
        await probe.models.list({ limit: 1 });
      },
      use(apiKey: string) {
        loggedIn = apiKey;
        client = undefined;
      },
    };
    kernel.services.provide('auth', auth);
    kernel.subcommands.register({
      name: 'login',
      description: 'store an Anthropic API key in $KEEL_HOME/auth.json (checked with the API first)',
      usage: 'keel login   (or: echo "$KEY" | keel login)',
      async run(_args, { io }) {
        const { login } = await import('./login.js');
        return login(kernel, io, auth.verify);
      },
    });
  },
}));

/**
 * The transport, through the `network` service's routes when a proxy or a client certificate is set (the service
 * loads nothing otherwise, and the transport connects directly).
 */
async function networkFetch(kernel: Kernel): Promise<typeof fetch> {
  const network = await kernel.services.get('network')?.load();
  if (!network) return nodeFetch;
  const route = (url: URL) => network.route(url, { identity: true, alpn: ['http/1.1'] });
  return (input, init) => nodeFetch(input, { ...init, [ROUTE]: route } as RequestInit);
}

/**
 * The SDK's own logging (e.g. "Could not parse message into JSON" on a malformed stream) goes to the kernel log
 * at debug level: the failure itself reaches the user once, as the retry or the final error.
 */
function sdkLogger(kernel: Kernel, plugin = NAME) {
  const log = (message: string, ...rest: unknown[]) =>
    kernel.log('debug', [message, ...rest.map((r) => (typeof r === 'string' ? r : JSON.stringify(r)))].join(' '), plugin);
  return { error: log, warn: log, info: log, debug: log };
}

/** OpenTelemetry tracing through the SDK, on with ANTHROPIC_OPEN_TELEMETRY: spans record the input messages. */
const tracing = () => process.env.ANTHROPIC_OPEN_TELEMETRY !== undefined;

/**
 * One attempt without the retry service, under a signal of its own: the SDK's abort listener on the signal it is
 * given lives as long as the response body, so a long-lived turn signal would collect one per request.
 */
async function singleAttempt(client: MessagesLike, params: Anthropic.MessageCreateParamsStreaming, signal: AbortSignal, opts: AttemptOptions): Promise<Anthropic.Message> {
  const attempt = new AbortController();
  const abort = () => attempt.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  try {
    return await streamAttempt(client, params, { signal: attempt.signal, alive: () => undefined }, opts);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

export function buildParams(request: QueryRequest, caching: boolean): Anthropic.MessageCreateParamsStreaming {
  if (request.thinking && request.thinking.budget_tokens >= request.maxTokens) {
    throw new KeelError(`config thinking.budget_tokens (${request.thinking.budget_tokens}) must be less than maxTokens (${request.maxTokens})`, { exitCode: 2 });
  }
  const parts = caching
    ? placeBreakpoints({ tools: request.tools, system: request.system, messages: request.messages })
    : { tools: request.tools, system: request.system, messages: request.messages };
  return {
    model: apiModel(request.model).model,
    max_tokens: request.maxTokens,
    ...(parts.system.length ? { system: parts.system } : {}),
    messages: parts.messages,
    ...(parts.tools.length ? { tools: parts.tools } : {}),
    ...(request.thinking ? { thinking: { type: 'enabled', budget_tokens: request.thinking.budget_tokens } } : {}),
    stream: true,
  };
}

async function query(kernel: Kernel, client: MessagesLike, request: QueryRequest, turn: Turn, caching: boolean, platform?: Platform): Promise<QueryResponse> {
  const built = { ...buildParams(request, caching), ...(platform ? { model: platform.model } : {}) };
  // The history and the tools go out as bytes serialised once; the client's fetch (nodeFetch) splices them in. Not
  // for a platform whose client signs the body it serialised (Bedrock's SigV4): the bytes sent must be those signed.
  const splice = platform?.prebuild ?? true;
  const { messages, prebuilt } = splice ? prebuild(built.messages, tracing()) : { messages: built.messages, prebuilt: undefined };
  const tools = splice && built.tools ? prebuildTools(built.tools) : undefined;
  const params = { ...built, messages, ...(tools ? { tools: tools.tools } : {}) };
  const signal = request.signal ?? turn.signal;
  const attemptOpts = {
    visible: request.tier === 'main' && request.stream !== false,
    emit: turn.emit,
    prebuilt: prebuilt ? (tools ? [prebuilt, tools.prebuilt] : [prebuilt]) : undefined,
    endpoint: platform && { label: platform.label, hint: platform.endpointHint },
    log: (message: string) => kernel.log('debug', message, NAME),
    betas: apiModel(request.model).betas,
    cancelled: () => signal.aborted,
  };
  const retry = kernel.services.get('retry');
  let message: Anthropic.Message;
  try {
    message = retry
      ? await retry.run((attempt) => streamAttempt(client, params, attempt, attemptOpts), { signal, emit: turn.emit, label: platform?.label ?? 'Anthropic API', url: client.baseURL })
      : await singleAttempt(client, params, signal, attemptOpts);
  } catch (err) {
    throw mapError(err, request.model, platform);
  }
  const usage = {
    input_tokens: message.usage.input_tokens ?? 0,
    output_tokens: message.usage.output_tokens ?? 0,
    cache_creation_input_tokens: message.usage.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: message.usage.cache_read_input_tokens ?? 0,
  };
  // On a platform the response names the platform's id (or nothing); usage and prices go by the Claude id asked for.
  // A `[1m]` request is priced and windowed as the 1M variant, whatever id the API echoes.
  const sent = apiModel(request.model);
  const answered = message.model || sent.model;
  const model = platform ? claudeModel(request.model) : sent.betas.length && !/\[1m\]$/i.test(answered) ? `${answered}[1m]` : answered;
  const costUsd = kernel.services.get('usage')?.record({ session: turn.session, model, tier: request.tier, usage });
  turn.emit({ type: 'usage', usage, costUsd: costUsd ?? 0, model, tier: request.tier });
  return {
    id: message.id,
    model,
    content: message.content,
    stopReason: message.stop_reason as StopReason | null,
    stopSequence: message.stop_sequence,
    usage,
    ...(costUsd !== undefined ? { costUsd } : {}),
  };
}
