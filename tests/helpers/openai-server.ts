/**
 * A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 (the shape Ollama, vLLM, llama.cpp and
 * LM Studio serve). A scenario is an ordered list of assistant turns (or faults); every request is recorded.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** An object (sent as JSON) or a raw arguments string. */
  arguments: unknown;
}

export interface ScriptedChat {
  text?: string;
  /** Sent as `reasoning_content` deltas before the text, as some local servers do. */
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string | null;
  usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
  /** Leave the usage chunk out even when the client asks for it. */
  omitUsage?: boolean;
  model?: string;
  /** Answer with this HTTP status and an OpenAI error body. */
  status?: number;
  errorMessage?: string;
  headers?: Record<string, string>;
  /** reset: destroy the socket before headers. cut: end after the first delta. stall: first chunk then nothing. malformed: a non-JSON data line. hang: never answer. */
  fault?: 'reset' | 'cut' | 'stall' | 'malformed' | 'hang';
  /**
   * Called before each `data:` line after the first; the server waits for it. A test holds the stream here or
   * writes raw lines of its own (keep-alive comments such as `: OPENROUTER PROCESSING`).
   */
  beforeChunk?: (ctx: { index: number; write(raw: string): Promise<void>; closed: Promise<void> }) => Promise<void> | void;
}

export type ChatStep = ScriptedChat | ((request: RecordedChatRequest) => ScriptedChat);

export interface RecordedChatRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any; // the parsed JSON body, shaped by the Chat Completions API
  finished?: Promise<'complete' | 'closed-early'>;
}

export interface ScriptedChatServer {
  /** The base URL to give the client (ends in /v1). */
  url: string;
  requests: RecordedChatRequest[];
  completionRequests(): RecordedChatRequest[];
  push(...steps: ChatStep[]): void;
  remaining(): number;
  close(): Promise<void>;
}

let callCounter = 0;

export async function startOpenAIServer(script: ChatStep[] = []): Promise<ScriptedChatServer> {
  const queue = [...script];
  const requests: RecordedChatRequest[] = [];
  const sockets = new Set<Socket>();
  let completionCounter = 0;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const recorded: RecordedChatRequest = { method: req.method ?? 'GET', path: url.pathname, headers: req.headers, body };
    recorded.finished = new Promise((resolve) => res.on('close', () => resolve(res.writableFinished ? 'complete' : 'closed-early')));
    requests.push(recorded);
    if (url.pathname.endsWith('/models')) return json(res, 200, { object: 'list', data: [{ id: 'test-model', object: 'model' }] });
    if (!url.pathname.endsWith('/chat/completions')) return json(res, 404, { error: { message: `no route ${url.pathname}`, type: 'invalid_request_error' } });

    const next = queue.shift();
    const step = typeof next === 'function' ? next(recorded) : next;
    if (!step) return json(res, 500, { error: { message: 'scripted server: the script has no more turns', type: 'server_error' } });
    if (step.fault === 'reset') return void req.socket.destroy();
    if (step.fault === 'hang') return;
    if (step.status && step.status >= 400) {
      return json(res, step.status, { error: { message: step.errorMessage ?? `scripted ${step.status}`, type: step.status === 401 ? 'invalid_request_error' : 'server_error', code: null } }, step.headers);
    }
    completionCounter++;
    const model = step.model ?? (body as { model?: string })?.model ?? 'test-model';
    const wantsUsage = Boolean((body as { stream_options?: { include_usage?: boolean } })?.stream_options?.include_usage);
    await stream(res, step, `chatcmpl-${completionCounter}`, model, wantsUsage);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    completionRequests: () => requests.filter((r) => r.path.endsWith('/chat/completions')),
    push: (...steps) => queue.push(...steps),
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function json(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

async function stream(res: http.ServerResponse, step: ScriptedChat, id: string, model: string, wantsUsage: boolean): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...step.headers });
  const created = 1_700_000_000;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const closed = new Promise<void>((resolve) => res.on('close', () => resolve()));
  const write = (raw: string) => new Promise<void>((resolve) => (res.destroyed ? resolve() : res.write(raw, () => resolve())));
  let sent = 0;
  const send = async (data: unknown) => {
    if (sent > 0) await step.beforeChunk?.({ index: sent, write, closed });
    sent++;
    if (!res.destroyed) res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  };
  const flush = () => new Promise<void>((resolve) => res.write(': flush\n\n', () => resolve()));

  await send(chunk({ role: 'assistant', content: '' }));
  if (step.fault === 'stall') return;
  if (step.fault === 'malformed') {
    await send('{not json');
    res.end();
    return;
  }
  if (step.reasoning) await send(chunk({ reasoning_content: step.reasoning }));
  for (const piece of split(step.text ?? '')) {
    await send(chunk({ content: piece }));
    if (step.fault === 'cut') {
      await flush();
      res.destroy();
      return;
    }
  }
  for (const [index, call] of (step.toolCalls ?? []).entries()) {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
    const mid = Math.floor(args.length / 2);
    await send(chunk({ tool_calls: [{ index, id: call.id ?? `call_${++callCounter}`, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const part of [args.slice(0, mid), args.slice(mid)]) await send(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
  }
  const finish = step.finishReason === undefined ? (step.toolCalls?.length ? 'tool_calls' : 'stop') : step.finishReason;
  if (finish !== null) await send(chunk({}, finish));
  if (wantsUsage && !step.omitUsage) {
    const prompt = step.usage?.prompt_tokens ?? 10;
    const completion = step.usage?.completion_tokens ?? 5;
    await send({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: step.usage?.cached_tokens ?? 0 } },
    });
  }
  await send('[DONE]');
  res.end();
}

function split(text: string): string[] {
  if (!text) return [];
  if (text.length < 8) return [text];
  const size = Math.ceil(text.length / 3);
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts;
}

export const chatSay = (text: string, extra: Partial<ScriptedChat> = {}): ScriptedChat => ({ text, ...extra });
export const chatCallTools = (...calls: ScriptedToolCall[]): ScriptedChat => ({ toolCalls: calls });
