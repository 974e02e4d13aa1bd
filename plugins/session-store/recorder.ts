/**
 * Per-session recording state (kept in `session.data`) and the operations that put the live history on
 * disk. New messages are found by comparing `session.messages` with what was already written, so every
 * message reaches the file, even one appended without an event; a rewritten history becomes a boundary.
 */
import { addUsage, emptyUsage, type MessageParam, type QueryResponse, type Session, type TokenUsage } from '../../kernel/index.js';
import { FORMAT_VERSION, type HeaderRecord, type MessageRecord, type SideRef, type Stats } from './records.js';
import { extractSideFiles, type SideWriter } from './side-files.js';
import type { SessionWriter } from './writer.js';

export interface Recorder {
  writer: SessionWriter;
  side: SideWriter;
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
  /** Set after a write failed: the session is no longer saved, and that was reported once. */
  failed: boolean;
  now: () => number;
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
  if (rec.writer.isOpen) return;
  const { created } = rec.writer.open();
  if (created) rec.writer.append(rec.header);
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
    const { message: stored, refs } = extractSideFiles(message, rec.side);
    const record: MessageRecord = { type: 'message', at: rec.now(), message: stored };
    if (refs.length) record.refs = refs;
    if (annotate && annotate.message === message) {
      const { response } = annotate;
      record.response = { id: response.id, model: response.model, stopReason: response.stopReason, usage: response.usage };
      if (response.costUsd !== undefined) record.response.costUsd = response.costUsd;
      record.stats = stats(rec);
    }
    rec.writer.append(record);
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
    const extracted = extractSideFiles(message, rec.side, m);
    refs.push(...extracted.refs);
    return extracted.message;
  });
  rec.writer.append({
    type: 'boundary',
    at: rec.now(),
    line: rec.writer.lines + 1,
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
  rec.writer.append({ type: 'usage', at: rec.now(), tier: event.tier, model: event.model, usage: event.usage, costUsd: event.costUsd, stats: stats(rec) });
}
