/**
 * Per-session recording state (kept in `session.data`) and the operations that put the live history in a
 * store (a file, or a backend another plugin offers through the `session-records` service). New messages are
 * found by comparing `session.messages` with what was already written, so every message is recorded, even one
 * appended without an event; a rewritten history becomes a boundary.
 */
import { addUsage, emptyUsage, type AgentEvent, type MessageParam, type QueryResponse, type Session, type TokenUsage } from '../../kernel/index.js';
import { FORMAT_VERSION, type HeaderRecord, type MessageRecord, type SessionRecord, type SideRef, type Stats } from './records.js';

/** Where a recorder's records go. */
export interface RecordSink {
  /** Called before every record: makes the store ready, writing the header first when the store is new. */
  ready(header: HeaderRecord): void;
  append(record: SessionRecord): void;
  /** Moves what the store keeps aside (the file store's side files) out of a message (`m`: its index in a boundary). */
  aside?(message: MessageParam, m?: number): { message: MessageParam; refs: SideRef[] };
  /** The number the next record will have, where the store counts lines (a boundary names its own). */
  nextLine?(): number;
}

export interface Recorder<S extends RecordSink = RecordSink> {
  sink: S;
  header: HeaderRecord;
  /** How many of `session.messages` are on file, and the last of them (to notice a rewrite). */
  recorded: number;
  last: MessageParam | undefined;
  /** Totals carried over from the file when resuming. */
  base: Stats;
  turns: number;
  responseCost: number;
  mainUsageCost: number;
  smallUsageCost: number;
  /** Calls and tokens reported by `usage` events in this process. */
  calls: number;
  usage: TokenUsage;
  /** Once the provider reports main-model usage events, main cost comes from those alone (never counted twice). */
  costFromUsage: boolean;
  /** The session's permission mode at the last write, recorded with the totals. */
  mode?: string;
  now: () => number;
}

export function newRecorder<S extends RecordSink>(sink: S, header: HeaderRecord, now: () => number): Recorder<S> {
  return {
    sink,
    header,
    recorded: 0,
    last: undefined,
    base: { turns: 0, costUsd: 0 },
    turns: 0,
    calls: 0,
    usage: emptyUsage(),
    responseCost: 0,
    mainUsageCost: 0,
    smallUsageCost: 0,
    costFromUsage: false,
    now,
  };
}

export function headerFor(session: Session, now: number, parent?: string, subagent = false): HeaderRecord {
  const header: HeaderRecord = {
    type: 'header',
    version: FORMAT_VERSION,
    id: session.id,
    cwd: session.cwd,
    projectRoot: session.projectRoot,
    model: session.model,
    preset: session.preset,
    createdAt: new Date(now).toISOString(),
  };
  if (parent) header.parent = parent;
  if (subagent) header.subagent = true;
  return header;
}

export function stats(rec: Recorder): Stats {
  return {
    turns: rec.base.turns + rec.turns,
    costUsd: rec.base.costUsd + (rec.costFromUsage ? rec.mainUsageCost : rec.responseCost) + rec.smallUsageCost,
    calls: (rec.base.calls ?? 0) + rec.calls,
    usage: addUsage(rec.base.usage ?? emptyUsage(), rec.usage),
    ...(rec.mode ? { permissionMode: rec.mode } : {}),
  };
}

function ensureOpen(rec: Recorder): void {
  rec.sink.ready(rec.header);
}

function aside(rec: Recorder, message: MessageParam, m?: number): { message: MessageParam; refs: SideRef[] } {
  return rec.sink.aside ? rec.sink.aside(message, m) : { message, refs: [] };
}

/** Writes every message not yet on file; `annotate` adds provider details to the assistant message it names. */
export function syncMessages(session: Session, rec: Recorder, annotate?: { message: MessageParam; response: QueryResponse }): void {
  rec.mode = session.permissionMode;
  const messages = session.messages;
  const rewritten = rec.recorded > messages.length || (rec.recorded > 0 && messages[rec.recorded - 1] !== rec.last);
  if (rewritten) {
    writeBoundary(session, rec, { trigger: 'rewrite' });
    return;
  }
  if (rec.recorded === messages.length) return;
  ensureOpen(rec);
  for (let i = rec.recorded; i < messages.length; i++) {
    const message = messages[i];
    const { message: stored, refs } = aside(rec, message);
    const record: MessageRecord = { type: 'message', at: rec.now(), message: stored };
    if (refs.length) record.refs = refs;
    if (annotate && annotate.message === message) {
      const { response } = annotate;
      record.response = { id: response.id, model: response.model, stopReason: response.stopReason, usage: response.usage };
      if (response.costUsd !== undefined) record.response.costUsd = response.costUsd;
      record.stats = stats(rec);
    }
    rec.sink.append(record);
    rec.recorded = i + 1;
    rec.last = message;
  }
}

/** Records the whole live history as the new starting point for resumes. */
export function writeBoundary(
  session: Session,
  rec: Recorder,
  info: { trigger: string; preTokens?: number; postTokens?: number; from?: string },
): void {
  ensureOpen(rec);
  rec.mode = session.permissionMode;
  const refs: SideRef[] = [];
  const messages = session.messages.map((message, m) => {
    const extracted = aside(rec, message, m);
    refs.push(...extracted.refs);
    return extracted.message;
  });
  const line = rec.sink.nextLine?.();
  rec.sink.append({
    type: 'boundary',
    at: rec.now(),
    ...(line !== undefined ? { line } : {}),
    trigger: info.trigger,
    ...(info.preTokens !== undefined ? { preTokens: info.preTokens } : {}),
    ...(info.postTokens !== undefined ? { postTokens: info.postTokens } : {}),
    messages,
    ...(refs.length ? { refs } : {}),
    stats: stats(rec),
    ...(info.from ? { from: info.from } : {}),
  });
  rec.recorded = session.messages.length;
  rec.last = session.messages[session.messages.length - 1];
}

export function countResponse(rec: Recorder, response: QueryResponse): void {
  rec.turns++;
  rec.responseCost += response.costUsd ?? 0;
}

export function writeUsage(rec: Recorder, event: { usage: TokenUsage; costUsd: number; model: string; tier: 'main' | 'small' }): void {
  rec.calls++;
  rec.usage = addUsage(rec.usage, event.usage);
  if (event.tier === 'main') {
    rec.costFromUsage = true;
    rec.mainUsageCost += event.costUsd;
  } else rec.smallUsageCost += event.costUsd;
  ensureOpen(rec);
  rec.sink.append({ type: 'usage', at: rec.now(), tier: event.tier, model: event.model, usage: event.usage, costUsd: event.costUsd, stats: stats(rec) });
}

/** The session an event belongs to: the loop emits message events right after appending to its messages. */
export function sessionOfEvent(event: AgentEvent, tracked: Session[]): Session | undefined {
  if (event.type !== 'user_message' && event.type !== 'assistant_message' && event.type !== 'tool_results') return undefined;
  for (let i = tracked.length - 1; i >= 0; i--) {
    const messages = tracked[i].messages;
    if (messages[messages.length - 1] === event.message || messages.lastIndexOf(event.message) !== -1) return tracked[i];
  }
  return undefined;
}

/** Records what an event adds to the session. */
export function recordEvent(event: AgentEvent, session: Session, rec: Recorder): void {
  switch (event.type) {
    case 'user_message':
    case 'tool_results':
    // A run ends: a prompt the loop took back (refused as invalid) leaves the record too.
    case 'result':
      syncMessages(session, rec);
      break;
    case 'assistant_message':
      countResponse(rec, event.response);
      syncMessages(session, rec, { message: event.message, response: event.response });
      break;
    case 'usage':
      writeUsage(rec, event);
      break;
    case 'compact':
      writeBoundary(session, rec, { trigger: event.trigger, preTokens: event.preTokens, postTokens: event.postTokens });
      break;
    default:
      break;
  }
}

/** Takes a stored session's rebuilt history and totals into the live session (resume in place or fork). */
export function adoptHistory(
  session: Session,
  rec: Recorder,
  source: { id: string; forked: boolean; messages: MessageParam[]; stats: Stats; repairs: number },
  log: (message: string) => void,
): void {
  for (const message of source.messages) session.messages.push(message);
  session.resumedFrom = source.id;
  rec.base = source.stats;
  session.inherited = { from: source.id, forked: source.forked, costUsd: source.stats.costUsd, calls: source.stats.calls, usage: source.stats.usage };
  if (source.repairs) log(`${source.id}: ${source.repairs} tool call(s) without a result were closed as interrupted`);
}
