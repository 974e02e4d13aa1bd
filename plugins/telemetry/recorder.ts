/**
 * Turns the kernel's events into OpenTelemetry metrics and spans. Metric names follow Claude Code's, under `keel.`:
 *
 * | metric | unit | attributes |
 * |---|---|---|
 * | keel.session.count | 1 | session.id |
 * | keel.token.usage | tokens | type: input, output, cacheRead, cacheCreation; model |
 * | keel.cost.usage | USD | model |
 * | keel.lines_of_code.count | 1 | type: added, removed; tool |
 * | keel.tool.decision | 1 | decision: accept, reject; source; tool |
 * | keel.active_time.total | s | type: cli (the agent working on a prompt) |
 *
 * Spans: `keel.turn` for each turn of the loop (a model request and the tool calls it asked for), with
 * `keel.model_request` and `keel.tool` inside it. Prompt text and tool inputs are attributes only when
 * `logUserPrompts` is on.
 */
import { ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Counter, type Meter, type Span, type Tracer } from '@opentelemetry/api';
import type { AgentEvent, ToolCall } from '../../kernel/index.js';

/** What the warm part records: a kernel event, or the start of a model request (from the `query` hook). */
export interface TelemetryEvent {
  at: number;
  event: AgentEvent | { type: 'query_start'; tier: 'main' | 'small'; model: string };
}

export interface Recorder {
  record(event: TelemetryEvent): void;
  /** Ends what is open, exports everything and stops the exporters. */
  shutdown(): Promise<void>;
}

interface Instruments {
  sessions: Counter;
  tokens: Counter;
  cost: Counter;
  lines: Counter;
  decisions: Counter;
  activeTime: Counter;
}

function instruments(meter: Meter): Instruments {
  return {
    sessions: meter.createCounter('keel.session.count', { description: 'Sessions started', unit: '1' }),
    tokens: meter.createCounter('keel.token.usage', { description: 'Tokens used, by type', unit: 'tokens' }),
    cost: meter.createCounter('keel.cost.usage', { description: 'Cost of the model requests', unit: 'USD' }),
    lines: meter.createCounter('keel.lines_of_code.count', { description: 'Lines of code added and removed by the file tools', unit: '1' }),
    decisions: meter.createCounter('keel.tool.decision', { description: 'Tool calls accepted and rejected', unit: '1' }),
    activeTime: meter.createCounter('keel.active_time.total', { description: 'Time the agent spent working on prompts', unit: 's' }),
  };
}

/** Lines added and removed, as a file tool's display reports them (tools-fs: `linesAdded`, `linesRemoved`). */
export function lineChanges(display: Record<string, unknown> | undefined): { added: number; removed: number } | undefined {
  const added = display?.linesAdded;
  const removed = display?.linesRemoved;
  if (typeof added !== 'number' && typeof removed !== 'number') return undefined;
  return { added: typeof added === 'number' ? added : 0, removed: typeof removed === 'number' ? removed : 0 };
}

export interface EventRecorderOptions {
  meter: Meter;
  tracer: Tracer;
  logUserPrompts: boolean;
  /** Said once a session has started, when a frontend is there to show them. */
  warnings?: string[];
  log?(level: 'warn', message: string): void;
  shutdown(): Promise<void>;
}

export function createEventRecorder(opts: EventRecorderOptions): Recorder {
  const { tracer, logUserPrompts } = opts;
  const m = instruments(opts.meter);
  let session: string | undefined;
  let turnSpan: Span | undefined;
  let prompt: string | undefined;
  let promptStartedAt: number | undefined;
  const queries: Array<{ at: number; tier: string; model: string }> = [];
  const tools = new Map<string, { span: Span; call: ToolCall }>();
  const decided = new Set<string>();
  const base = (): Attributes => (session ? { 'session.id': session } : {});
  const parent = () => (turnSpan ? trace.setSpan(ROOT_CONTEXT, turnSpan) : ROOT_CONTEXT);

  const endTurn = (at: number) => {
    turnSpan?.end(at);
    turnSpan = undefined;
  };
  const endPrompt = (at: number) => {
    if (promptStartedAt !== undefined) m.activeTime.add((at - promptStartedAt) / 1000, { ...base(), type: 'cli' });
    promptStartedAt = undefined;
  };

  const handlers: { [K in TelemetryEvent['event']['type']]?: (event: Extract<TelemetryEvent['event'], { type: K }>, at: number) => void } = {
    session_start(event) {
      for (const warning of opts.warnings?.splice(0) ?? []) opts.log?.('warn', warning);
      session = event.session.id;
      m.sessions.add(1, base());
    },
    user_message(event, at) {
      const content = event.message.content;
      prompt = typeof content === 'string' ? content : content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      promptStartedAt ??= at;
    },
    turn_start(event, at) {
      endTurn(at);
      promptStartedAt ??= at;
      turnSpan = tracer.startSpan('keel.turn', { startTime: at, attributes: { ...base(), 'keel.turn': event.turn, ...(prompt !== undefined ? promptAttributes(prompt) : {}) } });
      prompt = undefined;
    },
    query_start(event, at) {
      queries.push({ at, tier: event.tier, model: event.model });
    },
    usage(event, at) {
      const i = queries.findIndex((q) => q.tier === event.tier);
      const started = i >= 0 ? queries.splice(i, 1)[0] : undefined;
      const attributes = { ...base(), model: event.model };
      const u = event.usage;
      m.tokens.add(u.input_tokens, { ...attributes, type: 'input' });
      m.tokens.add(u.output_tokens, { ...attributes, type: 'output' });
      m.tokens.add(u.cache_read_input_tokens, { ...attributes, type: 'cacheRead' });
      m.tokens.add(u.cache_creation_input_tokens, { ...attributes, type: 'cacheCreation' });
      m.cost.add(event.costUsd, attributes);
      const span = tracer.startSpan(
        'keel.model_request',
        {
          startTime: started?.at ?? at,
          attributes: {
            ...attributes,
            'keel.tier': event.tier,
            'gen_ai.usage.input_tokens': u.input_tokens,
            'gen_ai.usage.output_tokens': u.output_tokens,
            'keel.usage.cache_read_tokens': u.cache_read_input_tokens,
            'keel.usage.cache_creation_tokens': u.cache_creation_input_tokens,
            'keel.cost_usd': event.costUsd,
          },
        },
        parent(),
      );
      span.end(at);
    },
    retry(event) {
      turnSpan?.addEvent('keel.retry', { attempt: event.attempt, cause: event.cause, delay_ms: event.delayMs });
    },
    permission(event) {
      decided.add(event.call.id);
      const accept = event.decision.behavior === 'allow';
      m.decisions.add(1, { ...base(), tool: event.call.name, decision: accept ? 'accept' : 'reject', source: event.source });
    },
    tool_start(event, at) {
      // A call that ran without a question or a refusal was allowed by the rules or the mode.
      if (!decided.delete(event.call.id)) m.decisions.add(1, { ...base(), tool: event.call.name, decision: 'accept', source: 'config' });
      const span = tracer.startSpan(
        'keel.tool',
        { startTime: at, attributes: { ...base(), 'keel.tool.name': event.call.name, 'keel.tool.use_id': event.call.id, ...(logUserPrompts ? { 'keel.tool.input': JSON.stringify(event.call.input) } : {}) } },
        parent(),
      );
      tools.set(event.call.id, { span, call: event.call });
    },
    tool_end(event, at) {
      const open = tools.get(event.call.id);
      tools.delete(event.call.id);
      decided.delete(event.call.id);
      if (open) {
        open.span.setAttribute('keel.tool.duration_ms', event.durationMs);
        if (event.result.isError) open.span.setStatus({ code: SpanStatusCode.ERROR });
        open.span.end(at);
      }
      if (event.result.isError) return;
      const changes = lineChanges(event.result.display);
      if (!changes) return;
      if (changes.added) m.lines.add(changes.added, { ...base(), type: 'added', tool: event.call.name });
      if (changes.removed) m.lines.add(changes.removed, { ...base(), type: 'removed', tool: event.call.name });
    },
    result(event, at) {
      if (event.result.isError) turnSpan?.setStatus({ code: SpanStatusCode.ERROR, message: event.result.error ?? event.result.subtype });
      endTurn(at);
      endPrompt(at);
      queries.length = 0;
    },
  };

  function promptAttributes(text: string): Attributes {
    return logUserPrompts ? { 'keel.prompt': text, 'keel.prompt_length': text.length } : { 'keel.prompt_length': text.length };
  }

  return {
    record({ at, event }) {
      const handler = handlers[event.type] as ((event: TelemetryEvent['event'], at: number) => void) | undefined;
      handler?.(event, at);
    },
    async shutdown() {
      const now = Date.now();
      for (const { span } of tools.values()) span.end(now);
      tools.clear();
      endTurn(now);
      endPrompt(now);
      await opts.shutdown();
    },
  };
}
