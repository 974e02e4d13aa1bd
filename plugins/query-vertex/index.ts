import { z } from 'zod';
import { definePlugin } from '../../kernel/index.js';

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
    kernel.services.require('anthropic-messages', NAME).cloudProvider({ plugin: NAME, platform: 'vertex', schema: vertexConfig, options: opts, load: () => import('./cold.js') });
  },
}));
