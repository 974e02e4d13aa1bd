/**
 * Per-session recording state and the operations that put the live history in the stream, as the file store's
 * recorder does (plugins/session-store/recorder.ts): new messages are found by comparing `session.messages` with
 * what was written, a rewritten history becomes a boundary, records carry running totals.
 */
import { addUsage, emptyUsage, type MessageParam, type QueryResponse, type Session, type TokenUsage } from '../../kernel/index.js';
import type { SessionStream } from './log.js';
import { FORMAT_VERSION, type HeaderRecord, type MessageRecord, type Stats } from './records.js';

export interface Recorder {
  stream: SessionStream;
  header: HeaderRecord;
  headerWritten: boolean;
  recorded: number;
  last: MessageParam | undefined;
  base: Stats;
  turns: number;
  responseCost: number;
  mainUsageCost: number;
  smallUsageCost: number;
  calls: number;
  usage: TokenUsage;
  costFromUsage: boolean;
  now: () => number;
}

export function newRecorder(stream: SessionStream, header: HeaderRecord, now: () => number): Recorder {
  return {
    stream,
    header,
    headerWritten: false,
    recorded: 0,
    last: undefined,
    base: { turns: 0, costUsd: 0 },
    turns: 0,
    responseCost: 0,
    mainUsageCost: 0,
    smallUsageCost: 0,
    calls: 0,
    usage: emptyUsage(),
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
  };
}

function ensureHeader(rec: Recorder): void {
  if (rec.headerWritten) return;
  rec.headerWritten = true;
  rec.stream.append(rec.header);
}

export function syncMessages(session: Session, rec: Recorder, annotate?: { message: MessageParam; response: QueryResponse }): void {
  const messages = session.messages;
  const rewritten = rec.recorded > messages.length || (rec.recorded > 0 && messages[rec.recorded - 1] !== rec.last);
  if (rewritten) {
    writeBoundary(session, rec, { trigger: 'rewrite' });
    return;
  }
  if (rec.recorded === messages.length) return;
  ensureHeader(rec);
  for (let i = rec.recorded; i < messages.length; i++) {
    const message = messages[i];
    const record: MessageRecord = { type: 'message', at: rec.now(), message };
    if (annotate && annotate.message === message) {
      const { response } = annotate;
      record.response = { id: response.id, model: response.model, stopReason: response.stopReason, usage: response.usage };
      if (response.costUsd !== undefined) record.response.costUsd = response.costUsd;
      record.stats = stats(rec);
    }
    rec.stream.append(record);
    rec.recorded = i + 1;
    rec.last = message;
  }
}

export function writeBoundary(session: Session, rec: Recorder, info: { trigger: string; preTokens?: number; postTokens?: number; from?: string }): void {
  ensureHeader(rec);
  rec.stream.append({
    type: 'boundary',
    at: rec.now(),
    trigger: info.trigger,
    ...(info.preTokens !== undefined ? { preTokens: info.preTokens } : {}),
    ...(info.postTokens !== undefined ? { postTokens: info.postTokens } : {}),
    messages: session.messages,
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
  ensureHeader(rec);
  rec.stream.append({ type: 'usage', at: rec.now(), tier: event.tier, model: event.model, usage: event.usage, costUsd: event.costUsd, stats: stats(rec) });
}
