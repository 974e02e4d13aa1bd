/** The Bedrock provider's requests, loaded on the first request it answers: the SDK's client and the query. */
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { KeelError, type Kernel, type QueryRequest, type QueryResponse, type Services, type Turn } from '../../kernel/index.js';
import type { BedrockSettings } from './index.js';

/** The query-anthropic plugin's description of a cloud platform. */
type CloudPlatform = Parameters<Services['anthropic-messages']['answer']>[1];

const NAME = 'query-bedrock';

export type BedrockQuery = (request: QueryRequest, turn: Turn) => Promise<QueryResponse>;

const BEDROCK: Omit<CloudPlatform, 'region'> = {
  platform: 'bedrock',
  label: 'Amazon Bedrock',
  // The body is signed (SigV4) as the SDK serialised it: the bytes sent must be those.
  prebuild: false,
  credentialsHint:
    'set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_BEARER_TOKEN_BEDROCK, and check AWS_REGION and the model access granted in the Bedrock console',
  endpointHint: 'ANTHROPIC_BEDROCK_BASE_URL / bedrock.baseURL',
};

/** The provider's requests through one client, made on the first request from the settings and the environment. */
export function bedrockQuery(kernel: Kernel, settings: BedrockSettings): BedrockQuery {
  const messages = kernel.services.get('anthropic-messages');
  if (!messages) throw new KeelError(`${NAME} needs the query-anthropic plugin's "anthropic-messages" service`, { code: 'config', exitCode: 2 });
  const region = settings.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const client = new AnthropicBedrock({ awsRegion: region, ...(settings.baseURL ? { baseURL: settings.baseURL } : {}), ...messages.clientOptions(NAME) });
  return messages.answer(client, { ...BEDROCK, region });
}
