/**
 * A scripted Anthropic-compatible Messages API server on 127.0.0.1. A scenario is an ordered list of
 * assistant turns (or faults); every request is recorded so tests can assert what the model received.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export type ScriptedBlock =
  | { type: 'text'; text: string; citations?: Array<Record<string, unknown>> }
  | { type: 'tool_use'; id?: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature: string }
  /** A server-side tool call (web search) and its result, streamed as the API streams them. */
  | { type: 'server_tool_use'; id: string; name: string; input: unknown }
  | { type: 'web_search_tool_result'; tool_use_id: string; content: unknown };

export interface ScriptedTurn {
  content?: ScriptedBlock[];
  /** Defaults to `tool_use` when the content has a tool_use block, else `end_turn`. */
  stopReason?: string;
  usage?: Partial<{ input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number }>;
  model?: string;
  /** Answer with this HTTP status and an Anthropic error body instead of a message. */
  status?: number;
  errorType?: string;
  errorMessage?: string;
  headers?: Record<string, string>;
  /**
   * reset: destroy the socket before headers. cut: end the stream after the first content block.
   * stall: send message_start then nothing. malformed: send an SSE event whose data is not JSON.
   * hang: read the request and never answer (no headers). partial-input: send only the first half of each
   * tool call's input JSON, then end the message normally.
   */
  fault?: 'reset' | 'cut' | 'stall' | 'malformed' | 'hang' | 'partial-input';
  /** Answer with exactly this status, headers and body (e.g. an HTML page from a proxy). */
  raw?: { status: number; headers?: Record<string, string>; body: string };
  /** Milliseconds between SSE events (lets tests interrupt a stream in flight). */
  eventDelayMs?: number;
  /**
   * Called before each SSE event is written; the server waits for it. A test holds the stream here (return
   * `ctx.closed` to hold until the client goes away), or writes raw lines of its own (pings, comments).
   */
  beforeEvent?: (ctx: BeforeEvent) => Promise<void> | void;
}

export interface BeforeEvent {
  /** 0 for message_start. */
  index: number;
  /** The SSE event name about to be written. */
  event: string;
  request: RecordedRequest;
  /** Writes raw SSE text now (e.g. `event: ping\ndata: {"type":"ping"}\n\n`), resolving once it is flushed. */
  write(raw: string): Promise<void>;
  /** Resolves when the client closes the connection. */
  closed: Promise<void>;
}

export type ScriptStep = ScriptedTurn | ((request: RecordedRequest) => ScriptedTurn);

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any; // the parsed JSON body of the request, shaped by the Messages API
  /** The body as the bytes arrived (UTF-8). */
  rawBody: string;
  receivedAt: number;
  /** How the answer ended: `complete` when the server finished it, `closed-early` when the client went away first. */
  finished?: Promise<'complete' | 'closed-early'>;
  /** The SSE events written to the client, in order (streamed answers only). */
  eventsSent: string[];
}

export interface ScriptedServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Requests to /v1/messages only. */
  messageRequests(): RecordedRequest[];
  push(...steps: ScriptStep[]): void;
  /** Steps not yet consumed. */
  remaining(): number;
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Answer a request outside the script (return undefined to fall through to the next scripted step). */
  route?: (request: RecordedRequest) => ScriptedTurn | undefined;
  /** API keys the server refuses with 401 on every route. */
  rejectKeys?: string[];
  /** Serve HTTPS with this key and certificate (PEM) instead of plain HTTP; with `requestCert`, clients must present a certificate `ca` signed. */
  tls?: { key: string; cert: string; ca?: string; requestCert?: boolean; rejectUnauthorized?: boolean };
}

let toolCounter = 0;

export async function startAnthropicServer(script: ScriptStep[] = [], options: ServerOptions = {}): Promise<ScriptedServer> {
  const queue = [...script];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let messageCounter = 0;

  const handler: http.RequestListener = async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = undefined;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, headers: req.headers, body, rawBody: raw, receivedAt: Date.now(), eventsSent: [] };
    recorded.finished = new Promise((resolve) => res.on('close', () => resolve(res.writableFinished ? 'complete' : 'closed-early')));
    requests.push(recorded);

    const key = apiKeyOf(recorded);
    if (key && options.rejectKeys?.includes(key)) {
      return json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    }
    if (url.pathname.endsWith('/models')) return json(res, 200, { data: [{ id: 'claude-test', type: 'model' }], has_more: false });
    if (url.pathname.endsWith('/count_tokens')) return json(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
    if (!url.pathname.endsWith('/messages')) return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${url.pathname}` } });

    let step: ScriptedTurn | undefined = options.route?.(recorded);
    if (!step) {
      const next = queue.shift();
      step = typeof next === 'function' ? next(recorded) : next;
    }
    if (!step) {
      return json(res, 500, { type: 'error', error: { type: 'api_error', message: 'scripted server: the script has no more turns' } });
    }
    if (step.fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (step.fault === 'hang') return;
    if (step.raw) {
      res.writeHead(step.raw.status, step.raw.headers ?? {});
      res.end(step.raw.body);
      return;
    }
    if (step.status && step.status >= 400) {
      res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
      res.end(JSON.stringify({ type: 'error', error: { type: step.errorType ?? errorTypeFor(step.status), message: step.errorMessage ?? `scripted ${step.status}` } }));
      return;
    }
    messageCounter++;
    const message = buildMessage(step, `msg_${messageCounter}`, (body as { model?: string })?.model);
    const wantsStream = Boolean((body as { stream?: boolean })?.stream);
    if (!wantsStream) return json(res, 200, message, step.headers);
    await streamMessage(res, message, step, recorded);
  };
  const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    messageRequests: () => requests.filter((r) => r.path.endsWith('/messages')),
    push: (...steps) => queue.push(...steps),
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function errorTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status === 400) return 'invalid_request_error';
  return 'api_error';
}

function json(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

interface BuiltMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Array<Record<string, unknown>>;
  stop_reason: string;
  stop_sequence: null;
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
}

function buildMessage(step: ScriptedTurn, id: string, model: string | undefined): BuiltMessage {
  const content = (step.content ?? [{ type: 'text', text: '' }]).map((block) =>
    block.type === 'tool_use' ? { type: 'tool_use', id: block.id ?? `toolu_${++toolCounter}`, name: block.name, input: block.input } : { ...block },
  );
  const hasTool = content.some((b) => b.type === 'tool_use');
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: step.model ?? model ?? 'claude-test',
    content,
    stop_reason: step.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: {
      input_tokens: step.usage?.input_tokens ?? 10,
      output_tokens: step.usage?.output_tokens ?? 5,
      cache_creation_input_tokens: step.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: step.usage?.cache_read_input_tokens ?? 0,
    },
  };
}

async function streamMessage(res: http.ServerResponse, message: BuiltMessage, step: ScriptedTurn, request: RecordedRequest): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...step.headers });
  const delay = step.eventDelayMs ?? 0;
  const closed = new Promise<void>((resolve) => res.on('close', () => resolve()));
  const write = (raw: string) => new Promise<void>((resolve) => (res.destroyed ? resolve() : res.write(raw, () => resolve())));
  const send = async (event: string, data: unknown) => {
    await step.beforeEvent?.({ index: request.eventsSent.length, event, request, write, closed });
    if (res.destroyed || res.writableEnded) return;
    request.eventsSent.push(event);
    res.write(`event: ${event}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    if (delay) await new Promise((r) => setTimeout(r, delay));
  };
  await send('message_start', {
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  if (step.fault === 'stall') return; // keep the socket open, send nothing more
  if (step.fault === 'malformed') {
    await send('content_block_start', '{not json');
    res.end();
    return;
  }
  await send('ping', { type: 'ping' });
  for (const [index, block] of message.content.entries()) {
    if (block.type === 'text') {
      const citations = block.citations as Array<Record<string, unknown>> | undefined;
      await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '', ...(citations ? { citations: [] } : {}) } });
      for (const citation of citations ?? []) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'citations_delta', citation } });
      }
      for (const piece of splitText(String(block.text))) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
      }
    } else if (block.type === 'server_tool_use') {
      await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'server_tool_use', id: block.id, name: block.name, input: {} } });
      await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } });
    } else if (block.type === 'web_search_tool_result') {
      await send('content_block_start', { type: 'content_block_start', index, content_block: block });
    } else if (block.type === 'tool_use') {
      await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input ?? {});
      const mid = Math.floor(json.length / 2);
      const pieces = step.fault === 'partial-input' ? [json.slice(0, mid)] : [json.slice(0, mid), json.slice(mid)];
      for (const piece of pieces) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
      }
    } else if (block.type === 'thinking') {
      await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } });
      await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    }
    await send('content_block_stop', { type: 'content_block_stop', index });
    if (step.fault === 'cut') {
      // Let what was sent reach the client first, so the cut lands mid-message rather than before the headers.
      await new Promise<void>((resolve) => res.write(': cut\n\n', () => resolve()));
      res.destroy();
      return;
    }
  }
  await send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  await send('message_stop', { type: 'message_stop' });
  res.end();
}

/** Splits text into a few deltas so streaming is exercised. */
function splitText(text: string): string[] {
  if (text.length < 8) return [text];
  const size = Math.ceil(text.length / 3);
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts;
}

/** Shorthands for scripts. */
export const say = (text: string, extra: Partial<ScriptedTurn> = {}): ScriptedTurn => ({ content: [{ type: 'text', text }], ...extra });
export const callTool = (name: string, input: unknown, id?: string, text?: string): ScriptedTurn => ({
  content: [...(text ? [{ type: 'text' as const, text }] : []), { type: 'tool_use', name, input, id }],
});
export const callTools = (...calls: Array<{ name: string; input: unknown; id?: string }>): ScriptedTurn => ({
  content: calls.map((c) => ({ type: 'tool_use' as const, ...c })),
});

/** The API key a request carried (the SDK sends `x-api-key` or `authorization: Bearer`, by version). */
export function apiKeyOf(request: RecordedRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string') return header;
  const auth = request.headers.authorization;
  return typeof auth === 'string' ? auth.replace(/^Bearer\s+/i, '') : undefined;
}

/**
 * Messages as the model saw them, minus wire details: prompt caching adds `cache_control` and may send
 * string content as one text block. Tests compare through this.
 */
export function plainMessages(messages: Array<{ role: string; content: unknown }>): Array<{ role: string; content: unknown }> {
  const stripped = JSON.parse(JSON.stringify(messages), (key, value) => (key === 'cache_control' ? undefined : value)) as Array<{ role: string; content: unknown }>;
  return stripped.map((m) => {
    if (Array.isArray(m.content) && m.content.length === 1 && m.content[0]?.type === 'text' && m.role === 'user') {
      return { ...m, content: m.content[0].text };
    }
    return m;
  });
}
