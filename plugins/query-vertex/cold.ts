/** The Vertex provider's requests, loaded on the first request it answers: the SDK's client and the query. */
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { GoogleAuth } from 'google-auth-library';
import { KeelError, type Kernel, type QueryRequest, type QueryResponse, type Services, type Turn } from '../../kernel/index.js';
import type { VertexSettings } from './index.js';

/** The query-anthropic plugin's description of a cloud platform. */
type CloudPlatform = Parameters<Services['anthropic-messages']['answer']>[1];

const NAME = 'query-vertex';

export type VertexQuery = (request: QueryRequest, turn: Turn) => Promise<QueryResponse>;

const VERTEX: Omit<CloudPlatform, 'region'> = {
  platform: 'vertex',
  label: 'Google Vertex AI',
  // The SDK rewrites the body (model into the URL) but signs nothing: the history can go out pre-built.
  prebuild: true,
  credentialsHint:
    'run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a credentials file, and check ANTHROPIC_VERTEX_PROJECT_ID and CLOUD_ML_REGION',
  endpointHint: 'ANTHROPIC_VERTEX_BASE_URL / vertex.baseURL',
};

/** The provider's requests through one client, made on the first request from the settings and the environment. */
export function vertexQuery(kernel: Kernel, settings: VertexSettings): VertexQuery {
  const messages = kernel.services.get('anthropic-messages');
  if (!messages) throw new KeelError(`${NAME} needs the query-anthropic plugin's "anthropic-messages" service`, { code: 'config', exitCode: 2 });
  const region = settings.region ?? process.env.CLOUD_ML_REGION;
  if (!region) throw new KeelError('Google Vertex AI needs a region: set CLOUD_ML_REGION (e.g. us-east5, europe-west1 or global) or config vertex.region', { code: 'config', exitCode: 2 });
  const projectId = settings.projectId ?? process.env.ANTHROPIC_VERTEX_PROJECT_ID;
  const client = new AnthropicVertex({
    region,
    // Given the project, Google's auth library does not go looking for one (the Cloud Resource Manager API, gcloud).
    googleAuth: new GoogleAuth({ scopes: 'https://www.googleapis.com/auth/cloud-platform', ...(projectId ? { projectId } : {}) }),
    ...(projectId ? { projectId } : {}),
    ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
    ...messages.clientOptions(NAME),
  });
  return messages.answer(client, { ...VERTEX, region });
}
