/**
 * `import { query } from 'keel/sdk'`: drive Keel from a program. The same stream-json protocol as
 * `keel --input-format stream-json`, as an async iterator of messages — in this process, or over a child.
 */
import { errorMessage, protocol } from '../kernel/index.js';
import { AsyncQueue } from './queue.js';
import { inProcessTransport, processTransport, type Transport } from './transports.js';
import type { PermissionResult, Query, QueryOptions, SDKMessage, SDKUserMessage } from './types.js';

export type * from './types.js';

type Reply = { ok: true; response: Record<string, unknown> } | { ok: false; error: string };

export function query({ prompt, options = {} }: { prompt: string | AsyncIterable<SDKUserMessage>; options?: QueryOptions }): Query {
  const out = new AsyncQueue<SDKMessage>();
  const pending = new Map<string, (reply: Reply) => void>();
  const userLabels = new Set<string>();
  const asks = new AbortController();
  /** canUseTool calls in flight, by request id: a turn's result ends them (Keel no longer waits for their answer). */
  const inflight = new Map<string, AbortController>();
  let requests = 0;
  let answered = 0;
  let promptDone = false;
  let ended = false;
  let transport: Transport | undefined;

  const ready: Promise<Transport> = (async () => {
    const t = options.transport === 'process' ? processTransport(options) : await inProcessTransport(options);
    transport = t;
    return t;
  })();

  const maybeEnd = (t: Transport) => {
    if (promptDone && answered >= userLabels.size && !ended) {
      ended = true;
      t.end();
    }
  };

  const request = async (body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const t = await ready;
    const id = `host_req_${++requests}`;
    const reply = await new Promise<Reply>((resolve) => {
      pending.set(id, resolve);
      t.send(protocol.controlRequest(id, body));
    });
    if (!reply.ok) throw new Error(`${String(body.subtype)}: ${reply.error}`);
    return reply.response;
  };

  const answerControl = async (t: Transport, message: Record<string, unknown>) => {
    const id = String(message.request_id);
    const req = (message.request ?? {}) as Record<string, unknown>;
    const respond = (body: PermissionResult) => t.send(protocol.controlSuccess(id, body));
    if (req.subtype !== 'can_use_tool') {
      t.send(protocol.controlError(id, `unsupported control request "${String(req.subtype)}"`));
      return;
    }
    if (!options.canUseTool) return respond({ behavior: 'deny', message: 'the host gave no canUseTool callback' });
    const ask = new AbortController();
    inflight.set(id, ask);
    const follow = () => ask.abort(asks.signal.reason);
    if (asks.signal.aborted) follow();
    else asks.signal.addEventListener('abort', follow, { once: true });
    try {
      const decision = await options.canUseTool(String(req.tool_name), req.input, {
        signal: ask.signal,
        toolUseId: String(req.tool_use_id),
        reason: typeof req.decision_reason === 'string' ? req.decision_reason : undefined,
        subagent: req.subagent as { name: string; parent_tool_use_id: string } | undefined,
      });
      if (!ask.signal.aborted) respond(decision);
    } catch (err) {
      if (!ask.signal.aborted) t.send(protocol.controlError(id, errorMessage(err)));
    } finally {
      inflight.delete(id);
      asks.signal.removeEventListener('abort', follow);
    }
  };

  const run = async () => {
    const t = await ready;
    options.abortController?.signal.addEventListener('abort', () => t.abort(), { once: true });
    const initialize: Record<string, unknown> = { subtype: 'initialize' };
    if (options.systemPrompt !== undefined) initialize.systemPrompt = options.systemPrompt;
    if (options.appendSystemPrompt !== undefined) initialize.appendSystemPrompt = options.appendSystemPrompt;
    if (options.agents !== undefined) initialize.agents = options.agents;
    void request(initialize).catch((err: unknown) => out.fail(err instanceof Error ? err : new Error(errorMessage(err))));
    void (async () => {
      const messages: AsyncIterable<SDKUserMessage> =
        typeof prompt === 'string' ? [{ type: 'user', message: { role: 'user', content: prompt }, parent_tool_use_id: null }] as unknown as AsyncIterable<SDKUserMessage> : prompt;
      for await (const message of messages) {
        const label = t.send(message);
        if ((message as { type?: unknown })?.type === 'user') userLabels.add(label);
      }
      promptDone = true;
      maybeEnd(t);
    })().catch((err: unknown) => out.fail(err instanceof Error ? err : new Error(errorMessage(err))));

    for await (const message of t.messages) {
      if (message.type === 'control_request') {
        void answerControl(t, message);
        continue;
      }
      if (message.type === 'control_response') {
        const body = message.response as { subtype?: string; request_id?: string; response?: Record<string, unknown>; error?: string };
        const resolve = body?.request_id ? pending.get(body.request_id) : undefined;
        if (resolve) {
          pending.delete(body.request_id!);
          resolve(body.subtype === 'success' ? { ok: true, response: body.response ?? {} } : { ok: false, error: body.error ?? 'error' });
        }
        continue;
      }
      out.push(message as SDKMessage);
      // A turn is answered by its result, or by an error naming its message (it was not a valid turn).
      if (message.type === 'result' && !message.parent_tool_use_id) {
        answered++;
        // The turn is over: a question still open was given up by Keel (an interrupt), and its callback is told so.
        for (const ask of inflight.values()) ask.abort(new Error('the turn ended before canUseTool answered'));
      }
      else if (message.type === 'system' && message.subtype === 'error' && [...userLabels].some((label) => String(message.error).startsWith(`${label}:`))) answered++;
      maybeEnd(t);
    }
    for (const resolve of pending.values()) resolve({ ok: false, error: 'Keel has finished' });
    out.end();
  };
  run().catch((err: unknown) => out.fail(err instanceof Error ? err : new Error(errorMessage(err))));

  const iterator = out[Symbol.asyncIterator]();
  const q: Query = {
    next: () => iterator.next(),
    return: async () => {
      asks.abort();
      transport?.abort();
      out.end();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return q;
    },
    interrupt: async () => void (await request({ subtype: 'interrupt' })),
    setPermissionMode: async (mode) => void (await request({ subtype: 'set_permission_mode', mode })),
    setModel: async (model) => void (await request({ subtype: 'set_model', model: model ?? null })),
  };
  return q;
}
