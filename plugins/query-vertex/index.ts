import { z } from 'zod';
import { definePlugin, KeelError, type Kernel } from '../../kernel/index.js';
import type { VertexQuery } from './cold.js';

export interface VertexSettings {
  /** The Vertex AI region, e.g. `us-east5`, `europe-west1` or `global` (otherwise `CLOUD_ML_REGION`). */
  region?: string;
  /** The Google Cloud project (otherwise `ANTHROPIC_VERTEX_PROJECT_ID`, then the credentials' own project). */
  projectId?: string;
  /** The endpoint (otherwise `ANTHROPIC_VERTEX_BASE_URL`, then the region's `aiplatform.googleapis.com`). */
  baseURL?: string;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Google Vertex AI, used when `provider` is `vertex` (or CLAUDE_CODE_USE_VERTEX=1); see README "Bedrock and Vertex". */
    vertex?: VertexSettings;
  }
}

const vertexConfig = z.object({ region: z.string().min(1), projectId: z.string().min(1), baseURL: z.url() }).partial().strict();

const NAME = 'query-vertex';
const TRUE = /^(1|true|yes|on)$/i;

/**
 * Switched on by config `provider: 'vertex'`, or, when `provider` is unset, by Claude Code's CLAUDE_CODE_USE_VERTEX=1
 * (which then sets `provider`, so the rest of Keel — the API-key check, `keel doctor` — knows the provider).
 */
export function vertexSelected(kernel: Kernel, env: NodeJS.ProcessEnv = process.env): boolean {
  const config = kernel.config as { provider?: string };
  if (config.provider === undefined && TRUE.test(env.CLAUDE_CODE_USE_VERTEX ?? '')) {
    if (TRUE.test(env.CLAUDE_CODE_USE_BEDROCK ?? '')) {
      throw new KeelError('CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX are both set: unset one, or set config `provider`', { code: 'config', exitCode: 2 });
    }
    config.provider = 'vertex';
  }
  return config.provider === 'vertex';
}

/**
 * Answers the `query` hook when the provider is `vertex`: Claude on Google Vertex AI through Anthropic's
 * `@anthropic-ai/vertex-sdk` (Google application default credentials), with everything the Anthropic provider does
 * to a request — prompt caching, streaming, the retry service, usage and cost — through its `anthropic-messages`
 * service. The SDK and the request code load on the first request this provider answers.
 */
export default definePlugin((opts: VertexSettings = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['query-anthropic'],
  config: { vertex: vertexConfig },
  apply(kernel) {
    const selected = vertexSelected(kernel);
    let query: VertexQuery | undefined;
    // Ahead of query-anthropic, which answers whenever `provider` is unset.
    kernel.hooks.query.tapPromise({ name: NAME, before: 'query-anthropic' }, async (request, turn) => {
      if (!selected && kernel.config.provider !== 'vertex') return undefined;
      if (!query) {
        const parsed = vertexConfig.safeParse(kernel.config.vertex ?? {});
        if (!parsed.success) throw new KeelError(`config vertex.${parsed.error.issues[0].path.join('.')}: ${parsed.error.issues[0].message}`, { code: 'config', exitCode: 2 });
        const { vertexQuery } = await import('./cold.js');
        query ??= vertexQuery(kernel, { ...opts, ...parsed.data });
      }
      return query(request, turn);
    });
  },
}));
