import { z } from 'zod';
import { definePlugin } from '../../kernel/index.js';

export interface BedrockSettings {
  /** The AWS region (otherwise `AWS_REGION`, `AWS_DEFAULT_REGION`, then `us-east-1`). */
  region?: string;
  /** The endpoint (otherwise `ANTHROPIC_BEDROCK_BASE_URL`, then `https://bedrock-runtime.<region>.amazonaws.com`). */
  baseURL?: string;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Amazon Bedrock, used when `provider` is `bedrock` (or CLAUDE_CODE_USE_BEDROCK=1); see README "Bedrock and Vertex". */
    bedrock?: BedrockSettings;
  }
}

const bedrockConfig = z.object({ region: z.string().min(1), baseURL: z.url() }).partial().strict();

const NAME = 'query-bedrock';

/**
 * Answers the `query` hook when the provider is `bedrock`: Claude on Amazon Bedrock through Anthropic's
 * `@anthropic-ai/bedrock-sdk` (SigV4 with the AWS credential chain, or AWS_BEARER_TOKEN_BEDROCK), with everything the
 * Anthropic provider does to a request — prompt caching, streaming, the retry service, usage and cost — through its
 * `anthropic-messages` service. The SDK and the request code load on the first request this provider answers.
 */
export default definePlugin((opts: BedrockSettings = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['query-anthropic'],
  config: { bedrock: bedrockConfig },
  apply(kernel) {
    kernel.services.require('anthropic-messages', NAME).cloudProvider({ plugin: NAME, platform: 'bedrock', schema: bedrockConfig, options: opts, load: () => import('./cold.js') });
  },
}));
