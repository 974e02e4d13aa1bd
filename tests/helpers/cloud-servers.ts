/**
 * Amazon Bedrock's and Google Vertex AI's Claude endpoints, played on 127.0.0.1 in front of the scripted Anthropic
 * server (anthropic-server.ts): each checks the request's credentials as the platform does, turns the platform's
 * request into a Messages API request for the script, and answers in the platform's own streaming format.
 *
 * - Bedrock: `POST /model/<id>/invoke-with-response-stream`, signed with SigV4. The signature is recomputed here with
 *   the test's credentials (@smithy/signature-v4, AWS's own signer) and the payload hash with node:crypto; a request
 *   that fails either is refused with 403 as Bedrock refuses it. The answer is AWS event-stream framing
 *   (`application/vnd.amazon.eventstream`), encoded with @smithy/eventstream-codec: one `chunk` event per Anthropic
 *   stream event, its JSON base64-encoded in `{"bytes": …}`.
 * - Vertex: a token endpoint (`POST /token`, an STS token exchange as an `external_account` credentials file makes),
 *   and `POST /v1/projects/<p>/locations/<r>/publishers/anthropic/models/<id>:streamRawPredict`, which requires the
 *   bearer token the endpoint issued and answers with the Messages API's SSE.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { startAnthropicServer, type ScriptStep, type ScriptedServer } from './anthropic-server.js';

export interface PlatformRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  rawBody: string;
  /** Why the platform refused it, when it did. */
  refused?: string;
}

export interface CloudServer {
  url: string;
  /** Requests to the model endpoint, as the platform received them. */
  requests: PlatformRequest[];
  /** The scripted Anthropic server behind it (what the model "received"). */
  upstream: ScriptedServer;
  close(): Promise<void>;
}

interface Listening {
  url: string;
  close(): Promise<void>;
}

async function listen(handler: http.RequestListener): Promise<Listening> {
  const sockets = new Set<Socket>();
  const server = http.createServer(handler);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function refuse(res: http.ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  res.end(JSON.stringify({ message }));
}

/** Sends the platform's request to the script as a Messages API request; the upstream response, unread. */
function forward(upstream: ScriptedServer, body: Record<string, unknown>, model: string): Promise<http.IncomingMessage> {
  const { anthropic_version: _version, ...rest } = body;
  const payload = JSON.stringify({ ...rest, model, stream: true });
  return new Promise((resolve, reject) => {
    const req = http.request(`${upstream.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'cloud-test', 'anthropic-version': '2023-06-01' } }, resolve);
    req.on('error', reject);
    req.end(payload);
  });
}

/** SSE events of a response body, as `{ event, data }`. */
async function* sseEvents(res: http.IncomingMessage): AsyncGenerator<{ event: string; data: string }> {
  let buffer = '';
  for await (const chunk of res) {
    buffer += (chunk as Buffer).toString('utf8');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data !== undefined) yield { event, data };
    }
  }
}

export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  /** A Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) also accepted as `Authorization: Bearer …`. */
  bearerToken?: string;
}

/** Recomputes the request's SigV4 signature; the reason it does not hold, or undefined when it does. */
async function checkSigV4(req: http.IncomingMessage, rawBody: string, creds: BedrockCredentials): Promise<string | undefined> {
  const auth = req.headers.authorization ?? '';
  const parsed = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!parsed) return `no SigV4 Authorization header (got ${JSON.stringify(auth)})`;
  const [, keyId, , region, service, signedHeaders, signature] = parsed;
  if (keyId !== creds.accessKeyId) return `signed with access key ${keyId}`;
  if (region !== creds.region) return `signed for region ${region}`;
  if (service !== 'bedrock') return `signed for service ${service}`;
  const payloadHash = createHash('sha256').update(rawBody, 'utf8').digest('hex');
  if (req.headers['x-amz-content-sha256'] && req.headers['x-amz-content-sha256'] !== payloadHash) return 'x-amz-content-sha256 is not the hash of the body received';
  if (creds.sessionToken && req.headers['x-amz-security-token'] !== creds.sessionToken) return 'the session token is missing';
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!date) return `bad x-amz-date ${amzDate}`;
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const headers: Record<string, string> = {};
  for (const name of signedHeaders.split(';')) headers[name] = String(req.headers[name] ?? '');
  const query: Record<string, string[]> = {};
  for (const key of new Set(url.searchParams.keys())) query[key] = url.searchParams.getAll(key);
  const signer = new SignatureV4({ service: 'bedrock', region: creds.region, credentials: creds, sha256: Sha256 });
  const signed = await signer.sign(
    { method: req.method ?? 'POST', protocol: 'http:', hostname: url.hostname, path: url.pathname, query, headers, body: rawBody },
    { signingDate: new Date(Date.UTC(+date[1], +date[2] - 1, +date[3], +date[4], +date[5], +date[6])) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization))?.[1];
  return expected === signature ? undefined : 'the signature does not match the request';
}

export async function startBedrockServer(script: ScriptStep[], creds: BedrockCredentials): Promise<CloudServer> {
  const upstream = await startAnthropicServer(script);
  const requests: PlatformRequest[] = [];
  const codec = new EventStreamCodec(
    (bytes) => Buffer.from(bytes).toString('utf8'),
    (text) => new Uint8Array(Buffer.from(text, 'utf8')),
  );
  const frame = (data: string) =>
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: 'chunk' },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      },
      body: new Uint8Array(Buffer.from(JSON.stringify({ bytes: Buffer.from(data, 'utf8').toString('base64') }), 'utf8')),
    });
  const server = await listen(async (req, res) => {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const recorded: PlatformRequest = { method: req.method ?? '', path: url.pathname, headers: req.headers, body: safeJson(rawBody), rawBody };
    requests.push(recorded);
    const route = /^\/model\/([^/]+)\/invoke-with-response-stream$/.exec(url.pathname);
    if (req.method !== 'POST' || !route) return refuse(res, 404, 'UnknownOperationException', `no operation at ${req.method} ${url.pathname}`);
    const bearer = creds.bearerToken !== undefined && req.headers.authorization === `Bearer ${creds.bearerToken}`;
    const refused = bearer ? undefined : await checkSigV4(req, rawBody, creds);
    if (refused) {
      recorded.refused = refused;
      return refuse(res, 403, 'InvalidSignatureException', `The request signature we calculated does not match the signature you provided: ${refused}`);
    }
    const up = await forward(upstream, recorded.body, decodeURIComponent(route[1]));
    if (up.statusCode !== 200) {
      const body = await readBody(up);
      res.writeHead(up.statusCode ?? 500, { 'content-type': 'application/json', 'x-amzn-errortype': 'ServiceUnavailableException' });
      return res.end(body);
    }
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomBytes(8).toString('hex') });
    for await (const { event, data } of sseEvents(up)) {
      if (event === 'ping') continue;
      res.write(frame(data));
    }
    res.end();
  });
  return {
    url: server.url,
    requests,
    upstream,
    async close() {
      await server.close();
      await upstream.close();
    },
  };
}

export interface VertexServer extends CloudServer {
  /** The token the token endpoint issues, and the subject tokens it was asked to exchange. */
  token: string;
  exchanges: string[];
}

export async function startVertexServer(script: ScriptStep[], opts: { project: string; region: string }): Promise<VertexServer> {
  const upstream = await startAnthropicServer(script);
  const requests: PlatformRequest[] = [];
  const exchanges: string[] = [];
  const token = `ya29.test-${randomBytes(8).toString('hex')}`;
  const server = await listen(async (req, res) => {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(rawBody);
      exchanges.push(form.get('subject_token') ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ access_token: token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 3600 }));
    }
    const recorded: PlatformRequest = { method: req.method ?? '', path: url.pathname, headers: req.headers, body: safeJson(rawBody), rawBody };
    requests.push(recorded);
    const route = new RegExp(`^/v1/projects/${opts.project}/locations/${opts.region}/publishers/anthropic/models/([^/:]+):streamRawPredict$`).exec(decodeURIComponent(url.pathname));
    if (req.method !== 'POST' || !route) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { code: 404, message: `no such endpoint ${url.pathname}`, status: 'NOT_FOUND' } }));
    }
    if (req.headers.authorization !== `Bearer ${token}`) {
      recorded.refused = `authorization ${JSON.stringify(req.headers.authorization)}`;
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } }));
    }
    const up = await forward(upstream, recorded.body, route[1]);
    res.writeHead(up.statusCode ?? 500, { 'content-type': String(up.headers['content-type'] ?? 'application/json') });
    up.pipe(res);
  });
  return {
    url: server.url,
    requests,
    upstream,
    token,
    exchanges,
    async close() {
      await server.close();
      await upstream.close();
    },
  };
}

function safeJson(raw: string): Record<string, unknown> {
  try {
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return {};
  }
}
