/**
 * Claude on Google Vertex AI through the binary: CLAUDE_CODE_USE_VERTEX=1 (or config `provider: 'vertex'`) gets an
 * access token through Google's application default credentials (here an `external_account` credentials file whose
 * token endpoint is the test's own), calls `streamRawPredict` with it, streams the SSE answer, retries an overloaded
 * answer through the retry service, and prices the call by the Claude model behind the Vertex id.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { startVertexServer, type VertexServer } from '../helpers/cloud-servers.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const PROJECT = 'keel-test-project';
const REGION = 'europe-west1';
const SUBJECT = 'subject-token-from-the-workload';

let server: VertexServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  server = ws = undefined;
});

/** Google ADC through a credentials file: an STS token exchange at the test's token endpoint, no other host. */
function vertexEnv(server: VertexServer, ws: Workspace, extra: Record<string, string> = {}): Record<string, string> {
  ws.write('subject-token.txt', SUBJECT);
  ws.write(
    'gcloud-credentials.json',
    JSON.stringify({
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/keel/providers/test',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${server.url}/token`,
      credential_source: { file: ws.path('subject-token.txt') },
    }),
  );
  return {
    KEEL_HOME: ws.home,
    CLAUDE_CODE_USE_VERTEX: '1',
    CLOUD_ML_REGION: REGION,
    ANTHROPIC_VERTEX_PROJECT_ID: PROJECT,
    ANTHROPIC_VERTEX_BASE_URL: `${server.url}/v1`,
    GOOGLE_APPLICATION_CREDENTIALS: ws.path('gcloud-credentials.json'),
    // Nothing may reach gcloud's own config or a metadata server of the machine running the test.
    CLOUDSDK_CONFIG: ws.path('no-gcloud'),
    NO_GCE_CHECK: 'true',
    ...extra,
  };
}

describe('Google Vertex AI', () => {
  it('streams a run with an ADC token end to end, retries a 529, and reports its cost', async () => {
    server = await startVertexServer(
      [{ status: 529, errorType: 'overloaded_error', errorMessage: 'Overloaded' }, say('hello from vertex, streamed in pieces', { usage: { input_tokens: 2000, output_tokens: 100 } })],
      { project: PROJECT, region: REGION },
    );
    ws = makeWorkspace({ git: true });
    const run = await runKeel(['-p', 'hi', '--model', 'claude-opus-4-1', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'], {
      cwd: ws.dir,
      env: vertexEnv(server, ws),
      timeoutMs: 60_000,
    });
    expect(run.stderr.split('\n').filter((line) => line && !line.startsWith('[debug]'))).toEqual([]);
    expect(run.code).toBe(0);
    const lines = ndjson(run.stdout);
    expect(lines).toContainEqual(expect.objectContaining({ type: 'system', subtype: 'api_retry', attempt: 1 }));
    const deltas = lines.filter((l) => l.type === 'stream_event' && l.event.type === 'content_block_delta').map((l) => l.event.delta.text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('hello from vertex, streamed in pieces');
    const result = lines.at(-1);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'hello from vertex, streamed in pieces' });
    // Priced as claude-opus-4-1 ($15 / $75 per million): 2000 in, 100 out.
    expect(result.total_cost_usd).toBeCloseTo((2000 * 15 + 100 * 75) / 1_000_000, 8);

    // The workload's subject token was exchanged for the access token every request carried.
    expect(server.exchanges[0]).toBe(SUBJECT);
    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) {
      expect(request.refused).toBeUndefined();
      expect(request.path).toBe(`/v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/claude-opus-4-1@20250805:streamRawPredict`);
      expect(request.headers.authorization).toBe(`Bearer ${server.token}`);
      expect(request.headers['x-api-key']).toBeUndefined();
      expect(request.body).not.toHaveProperty('model');
      expect(typeof request.body.anthropic_version).toBe('string');
    }
    expect(server.upstream.messageRequests()[1].rawBody).toContain('"cache_control":{"type":"ephemeral"}');
  }, 90_000);

  it('switches on with config provider "vertex" and its region and project', async () => {
    server = await startVertexServer([say('configured')], { project: 'other-project', region: 'us-east5' });
    ws = makeWorkspace({ git: true });
    const { CLAUDE_CODE_USE_VERTEX: _on, CLOUD_ML_REGION: _region, ANTHROPIC_VERTEX_PROJECT_ID: _project, ANTHROPIC_VERTEX_BASE_URL: _url, ...env } = vertexEnv(server, ws);
    ws.write('agent.config.json', JSON.stringify({ provider: 'vertex', vertex: { region: 'us-east5', projectId: 'other-project', baseURL: `${server.url}/v1` }, model: 'claude-haiku-4-5' }));
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('configured\n');
    expect(server.requests[0].path).toBe('/v1/projects/other-project/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5@20251001:streamRawPredict');
  });

  it('a refused token fails at once with one line naming Vertex and what to check', async () => {
    server = await startVertexServer([say('never')], { project: PROJECT, region: REGION });
    ws = makeWorkspace({ git: true });
    const env = vertexEnv(server, ws);
    // A token endpoint elsewhere issues a token this Vertex does not accept.
    const other = await startVertexServer([], { project: PROJECT, region: REGION });
    try {
      ws.write('gcloud-credentials.json', readFileSync(ws.path('gcloud-credentials.json'), 'utf8').replace(`${server.url}/token`, `${other.url}/token`));
      const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
      expect(run.code).not.toBe(0);
      expect(server.requests).toHaveLength(1);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/^keel: .*Google Vertex AI refused the credentials \(HTTP 401: .*gcloud auth application-default login/);
    } finally {
      await other.close();
    }
  });

  it('without a region says which variable to set', async () => {
    server = await startVertexServer([say('never')], { project: PROJECT, region: REGION });
    ws = makeWorkspace({ git: true });
    const { CLOUD_ML_REGION: _region, ...env } = vertexEnv(server, ws);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('Google Vertex AI needs a region: set CLOUD_ML_REGION');
    expect(server.requests).toHaveLength(0);
  });

  it('credentials that cannot be had say so, naming what to set', async () => {
    server = await startVertexServer([say('never')], { project: PROJECT, region: REGION });
    ws = makeWorkspace({ git: true });
    const env = vertexEnv(server, ws, { GOOGLE_APPLICATION_CREDENTIALS: ws.path('missing-credentials.json') });
    ws.write('agent.config.json', JSON.stringify({ retry: { baseDelayMs: 1 } }));
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(run.stderr).toMatch(/Google Vertex AI: Failed to acquire Google OAuth credentials \(.*missing-credentials\.json.*\); run `gcloud auth application-default login`/);
  }, 90_000);
});
