/**
 * Claude on Amazon Bedrock through the binary: CLAUDE_CODE_USE_BEDROCK=1 (or config `provider: 'bedrock'`) sends
 * SigV4-signed requests to Bedrock's streaming endpoint, reads its event-stream answer as a stream, retries an
 * overloaded answer through the retry service, and prices the call by the Claude model behind the Bedrock id.
 */
import { startTinyproxy } from '../helpers/proxy.js';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { startBedrockServer, type CloudServer } from '../helpers/cloud-servers.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const CREDS = { accessKeyId: 'AKIDKEELTEST0001', secretAccessKey: 'keel/test/secret/0123456789abcdefghij', sessionToken: 'keel-session-token', region: 'eu-west-1' };

let server: CloudServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  server = ws = undefined;
});

function bedrockEnv(url: string, home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    KEEL_HOME: home,
    CLAUDE_CODE_USE_BEDROCK: '1',
    AWS_REGION: CREDS.region,
    AWS_ACCESS_KEY_ID: CREDS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey,
    AWS_SESSION_TOKEN: CREDS.sessionToken,
    ANTHROPIC_BEDROCK_BASE_URL: url,
    // Nothing may fall back to the AWS config files or the instance metadata service of the machine running the test.
    AWS_CONFIG_FILE: '/nonexistent/keel-test-aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/keel-test-aws-credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

describe('Amazon Bedrock', () => {
  it('streams a signed run end to end, retries a 503, and reports its cost', async () => {
    server = await startBedrockServer(
      [{ status: 503, errorType: 'overloaded_error', errorMessage: 'Bedrock is busy' }, say('hello from bedrock, streamed in pieces', { usage: { input_tokens: 1000, output_tokens: 200 } })],
      CREDS,
    );
    ws = makeWorkspace({ git: true });
    const run = await runKeel(['-p', 'hi', '--model', 'claude-sonnet-4-5', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'], {
      cwd: ws.dir,
      env: bedrockEnv(server.url, ws.home),
      timeoutMs: 60_000,
    });
    // --verbose logs debug lines; nothing else.
    expect(run.stderr.split('\n').filter((line) => line && !line.startsWith('[debug]'))).toEqual([]);
    expect(run.code).toBe(0);
    const lines = ndjson(run.stdout);
    // The retry, as a stream-json line.
    expect(lines).toContainEqual(expect.objectContaining({ type: 'system', subtype: 'api_retry', attempt: 1 }));
    // Streaming: the text arrived as several deltas.
    const deltas = lines.filter((l) => l.type === 'stream_event' && l.event.type === 'content_block_delta').map((l) => l.event.delta.text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('hello from bedrock, streamed in pieces');
    const result = lines.at(-1);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'hello from bedrock, streamed in pieces' });
    // Priced as claude-sonnet-4-5 ($3 / $15 per million): 1000 in, 200 out.
    expect(result.total_cost_usd).toBeCloseTo((1000 * 3 + 200 * 15) / 1_000_000, 8);

    // Both attempts reached Bedrock's streaming endpoint for the EU inference profile, correctly signed.
    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) {
      expect(request.refused).toBeUndefined();
      expect(request.path).toBe('/model/eu.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream');
      expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDKEELTEST0001\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
      expect(request.headers['x-api-key']).toBeUndefined();
      expect(request.body).not.toHaveProperty('model');
      expect(request.body).not.toHaveProperty('stream');
      expect(typeof request.body.anthropic_version).toBe('string');
    }
    // Prompt caching as on the Anthropic API: breakpoints on the system prompt and the last message.
    expect(server.upstream.messageRequests()[1].rawBody).toContain('"cache_control":{"type":"ephemeral"}');
  }, 90_000);

  it('switches on with config provider "bedrock" and config bedrock.region', async () => {
    server = await startBedrockServer([say('configured')], { ...CREDS, region: 'us-west-2' });
    ws = makeWorkspace({ git: true });
    ws.write('agent.config.json', JSON.stringify({ provider: 'bedrock', bedrock: { region: 'us-west-2', baseURL: server.url }, model: 'claude-3-5-haiku-latest' }));
    const { CLAUDE_CODE_USE_BEDROCK: _on, AWS_REGION: _region, ANTHROPIC_BEDROCK_BASE_URL: _url, ...env } = bedrockEnv(server.url, ws.home);
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('configured\n');
    expect(server.requests[0].path).toBe('/model/us.anthropic.claude-3-5-haiku-20241022-v1:0/invoke-with-response-stream');
  });

  it('sends a model id given in Bedrock form (ANTHROPIC_MODEL) unchanged', async () => {
    server = await startBedrockServer([say('as given')], CREDS);
    ws = makeWorkspace({ git: true });
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: bedrockEnv(server.url, ws.home, { ANTHROPIC_MODEL: 'anthropic.claude-opus-4-1-20250805-v1:0' }) });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('as given\n');
    expect(server.requests[0].path).toBe('/model/anthropic.claude-opus-4-1-20250805-v1:0/invoke-with-response-stream');
  });

  it('takes a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) instead of signing', async () => {
    server = await startBedrockServer([say('with an API key')], { ...CREDS, bearerToken: 'bedrock-api-key-1' });
    ws = makeWorkspace({ git: true });
    const { AWS_ACCESS_KEY_ID: _k, AWS_SECRET_ACCESS_KEY: _s, AWS_SESSION_TOKEN: _t, ...env } = bedrockEnv(server.url, ws.home);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key-1' } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('with an API key\n');
    expect(server.requests[0].headers.authorization).toBe('Bearer bedrock-api-key-1');
  });

  it('refused credentials fail at once with one line naming Bedrock and what to check', async () => {
    server = await startBedrockServer([say('never')], CREDS);
    ws = makeWorkspace({ git: true });
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: bedrockEnv(server.url, ws.home, { AWS_SECRET_ACCESS_KEY: 'a-wrong-secret' }) });
    expect(run.code).not.toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].refused).toBe('the signature does not match the request');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^keel: .*Amazon Bedrock refused the credentials \(HTTP 403: .*AWS_PROFILE or AWS_ACCESS_KEY_ID/);
  });

  it('without any AWS credentials says so, naming the variables to set', async () => {
    server = await startBedrockServer([say('never')], CREDS);
    ws = makeWorkspace({ git: true });
    const { AWS_ACCESS_KEY_ID: _k, AWS_SECRET_ACCESS_KEY: _s, AWS_SESSION_TOKEN: _t, ...env } = bedrockEnv(server.url, ws.home);
    ws.write('agent.config.json', JSON.stringify({ retry: { baseDelayMs: 1 } }));
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(run.stderr).toMatch(/Amazon Bedrock: Failed to resolve AWS credentials.*; set AWS_PROFILE or AWS_ACCESS_KEY_ID/);
  }, 90_000);

  it('goes through the proxy in HTTP_PROXY (the network plugin), still signed and streamed', async () => {
    server = await startBedrockServer([say('through the proxy, streamed')], CREDS);
    ws = makeWorkspace({ git: true });
    const tiny = await startTinyproxy();
    try {
      const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...bedrockEnv(server.url, ws.home), HTTP_PROXY: tiny.url() }, timeoutMs: 60_000 });
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe('through the proxy, streamed\n');
      expect(tiny.requests()).toContain(`POST ${server.url}/model/eu.anthropic.claude-sonnet-5-5-v1:0/invoke-with-response-stream HTTP/1.1`);
      expect(server.requests[0].refused).toBeUndefined();
    } finally {
      await tiny.stop();
    }
  }, 90_000);

  it('a malformed bedrock setting stops the run naming the file and the key', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('agent.config.json', JSON.stringify({ provider: 'bedrock', bedrock: { region: 5 } }));
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: { KEEL_HOME: ws.home } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/agent\.config\.json.*bedrock\.region/);
  });

  it('CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX together are refused', async () => {
    ws = makeWorkspace({ git: true });
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, CLAUDE_CODE_USE_BEDROCK: '1', CLAUDE_CODE_USE_VERTEX: '1' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX are both set');
  });
});
