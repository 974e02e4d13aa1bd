/** The Bedrock provider's client, loaded on the first request it answers (with the SDK). */
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import type { BedrockSettings } from './index.js';

/** What query-anthropic builds every platform's client with: retries off, Keel's transport, the SDK's logging. */
type ClientOptions = Pick<NonNullable<ConstructorParameters<typeof AnthropicBedrock>[0]>, 'maxRetries' | 'fetch' | 'logger'>;

/** The client from the settings and the environment, and the region it serves. */
export function client(settings: BedrockSettings, options: ClientOptions): { client: AnthropicBedrock; region: string } {
  const region = settings.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  return { region, client: new AnthropicBedrock({ awsRegion: region, ...(settings.baseURL ? { baseURL: settings.baseURL } : {}), ...options }) };
}
