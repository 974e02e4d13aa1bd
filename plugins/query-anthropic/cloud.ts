/**
 * Claude on the cloud platforms, for the plugins that bring each platform's SDK (query-bedrock, query-vertex): when a
 * platform is switched on, how it is described in errors, and the provider's `query` tap, which builds the platform's
 * client on the first request it answers and sends every request through this plugin's request code.
 */
import { KeelError, type Kernel, type QueryRequest, type QueryResponse, type Turn, type z } from '../../kernel/index.js';
import type { MessagesLike } from './client.js';
import type { Platform } from './errors.js';
import { platformModel, type CloudPlatform } from './platform-models.js';

/** What a platform's client is built with: retries off (the retry service's), Keel's transport, the SDK's logging in the kernel log. */
export interface ClientOptions {
  maxRetries: 0;
  fetch: typeof fetch;
  logger: Record<'error' | 'warn' | 'info' | 'debug', (message: string, ...rest: unknown[]) => void>;
}

/** A platform's client, and the region it serves (Bedrock's model ids depend on it). */
export interface CloudClient {
  client: MessagesLike;
  region: string;
}

/** A plugin that brings a platform's SDK: its config section `<platform>` and how to build the client. */
export interface CloudProvider<S> {
  /** The provider plugin: its tap on `query` bears its name. */
  plugin: string;
  platform: CloudPlatform;
  /** Checks config `<platform>` (e.g. `bedrock: { region }`) on the first request; the plugin's options lie under it. */
  schema: z.ZodType<S>;
  options: S;
  /** Loads the plugin's cold part (with the SDK), on the first request, whose `client` builds the SDK's client. */
  load(): Promise<{ client(settings: S, options: ClientOptions): CloudClient }>;
}

interface PlatformFacts extends Omit<Platform, 'model'> {
  /** Claude Code's environment switch for the platform. */
  switch: string;
}

const PLATFORMS: Record<CloudPlatform, PlatformFacts> = {
  bedrock: {
    switch: 'CLAUDE_CODE_USE_BEDROCK',
    label: 'Amazon Bedrock',
    // The body is signed (SigV4) as the SDK serialised it: the bytes sent must be those.
    prebuild: false,
    credentialsHint:
      'set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_BEARER_TOKEN_BEDROCK, and check AWS_REGION and the model access granted in the Bedrock console',
    endpointHint: 'ANTHROPIC_BEDROCK_BASE_URL / bedrock.baseURL',
  },
  vertex: {
    switch: 'CLAUDE_CODE_USE_VERTEX',
    label: 'Google Vertex AI',
    // The SDK rewrites the body (model into the URL) but signs nothing: the history can go out pre-built.
    prebuild: true,
    credentialsHint:
      'run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a credentials file, and check ANTHROPIC_VERTEX_PROJECT_ID and CLOUD_ML_REGION',
    endpointHint: 'ANTHROPIC_VERTEX_BASE_URL / vertex.baseURL',
  },
};

const TRUE = /^(1|true|yes|on)$/i;

/**
 * Switched on by config `provider: '<platform>'`, or, when `provider` is unset, by Claude Code's switch
 * (CLAUDE_CODE_USE_BEDROCK=1, …), which then sets `provider`, so the rest of Keel — the API-key check, `keel doctor` —
 * knows the provider. Two switches at once are refused.
 */
export function cloudSelected(kernel: Kernel, platform: CloudPlatform, env: NodeJS.ProcessEnv = process.env): boolean {
  const config = kernel.config as { provider?: string };
  if (config.provider === undefined && TRUE.test(env[PLATFORMS[platform].switch] ?? '')) {
    const both = Object.values(PLATFORMS).map((facts) => facts.switch).filter((name) => TRUE.test(env[name] ?? ''));
    if (both.length > 1) throw new KeelError(`${both.join(' and ')} are both set: unset one, or set config \`provider\``, { code: 'config', exitCode: 2 });
    config.provider = platform;
  }
  return config.provider === platform;
}

type Send = (client: MessagesLike, request: QueryRequest, turn: Turn, platform: Platform) => Promise<QueryResponse>;

/**
 * Taps `query` for the provider, ahead of query-anthropic (which answers whenever `provider` is unset): it answers
 * when the provider is its platform, through `send` (this plugin's request code), building the platform's client on
 * the first request (again on the next one, if that failed).
 */
export function tapCloudProvider<S>(kernel: Kernel, provider: CloudProvider<S>, clientOptions: (plugin: string) => ClientOptions, send: Send): void {
  const { plugin, platform } = provider;
  const { switch: _switch, ...facts } = PLATFORMS[platform];
  const selected = cloudSelected(kernel, platform);
  let connecting: Promise<CloudClient> | undefined;
  const connect = async (): Promise<CloudClient> => {
    const parsed = provider.schema.safeParse((kernel.config as Record<string, unknown>)[platform] ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new KeelError(`config ${platform}.${issue.path.join('.')}: ${issue.message}`, { code: 'config', exitCode: 2 });
    }
    const cold = await provider.load();
    return cold.client({ ...provider.options, ...parsed.data }, clientOptions(plugin));
  };
  kernel.hooks.query.tapPromise({ name: plugin, before: 'query-anthropic' }, async (request, turn) => {
    if (!selected && kernel.config.provider !== platform) return undefined;
    connecting ??= connect().catch((err: unknown) => {
      connecting = undefined;
      throw err;
    });
    const { client, region } = await connecting;
    return send(client, request, turn, { ...facts, model: platformModel(platform, request.model, region) });
  });
}
