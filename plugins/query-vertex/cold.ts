/** The Vertex provider's client, loaded on the first request it answers (with the SDK and Google's auth library). */
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { GoogleAuth } from 'google-auth-library';
import { KeelError } from '../../kernel/index.js';
import type { VertexSettings } from './index.js';

/** What query-anthropic builds every platform's client with: retries off, Keel's transport, the SDK's logging. */
type ClientOptions = Pick<NonNullable<ConstructorParameters<typeof AnthropicVertex>[0]>, 'maxRetries' | 'fetch' | 'logger'>;

/** The client from the settings and the environment, and the region it serves. */
export function client(settings: VertexSettings, options: ClientOptions): { client: AnthropicVertex; region: string } {
  const region = settings.region ?? process.env.CLOUD_ML_REGION;
  if (!region) throw new KeelError('Google Vertex AI needs a region: set CLOUD_ML_REGION (e.g. us-east5, europe-west1 or global) or config vertex.region', { code: 'config', exitCode: 2 });
  const projectId = settings.projectId ?? process.env.ANTHROPIC_VERTEX_PROJECT_ID;
  const client = new AnthropicVertex({
    region,
    // Given the project, Google's auth library does not go looking for one (the Cloud Resource Manager API, gcloud).
    googleAuth: new GoogleAuth({ scopes: 'https://www.googleapis.com/auth/cloud-platform', ...(projectId ? { projectId } : {}) }),
    ...(projectId ? { projectId } : {}),
    ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
    ...options,
  });
  return { region, client };
}
