import { z } from 'zod';
import { definePlugin, KeelError, type Kernel } from '../../kernel/index.js';
import type { BedrockQuery } from './cold.js';

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
const TRUE = /^(1|true|yes|on)$/i;

/**
 * Switched on by config `provider: 'bedrock'`, or, when `provider` is unset, by Claude Code's CLAUDE_CODE_USE_BEDROCK=1
 * (which then sets `provider`, so the rest of Keel — the API-key check, `keel doctor` — knows the provider).
 */
export function bedrockSelected(kernel: Kernel, env: NodeJS.ProcessEnv = process.env): boolean {
  const config = kernel.config as { provider?: string };
  if (config.provider === undefined && TRUE.test(env.CLAUDE_CODE_USE_BEDROCK ?? '')) {
    if (TRUE.test(env.CLAUDE_CODE_USE_VERTEX ?? '')) {
      throw new KeelError('CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX are both set: unset one, or set config `provider`', { code: 'config', exitCode: 2 });
    }
    config.provider = 'bedrock';
  }
  return config.provider === 'bedrock';
}

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
    const selected = bedrockSelected(kernel);
    let query: BedrockQuery | undefined;
    // Ahead of query-anthropic, which answers whenever `provider` is unset.
    kernel.hooks.query.tapPromise({ name: NAME, before: 'query-anthropic' }, async (request, turn) => {
      if (!selected && kernel.config.provider !== 'bedrock') return undefined;
      if (!query) {
        const parsed = bedrockConfig.safeParse(kernel.config.bedrock ?? {});
        if (!parsed.success) throw new KeelError(`config bedrock.${parsed.error.issues[0].path.join('.')}: ${parsed.error.issues[0].message}`, { code: 'config', exitCode: 2 });
        const { bedrockQuery } = await import('./cold.js');
        query ??= bedrockQuery(kernel, { ...opts, ...parsed.data });
      }
      return query(request, turn);
    });
  },
}));
