/** Rebuilds a session from its stream: from the last boundary on, corrupt entries skipped with a warning, then repaired. */
import type { MessageParam } from '../../kernel/index.js';
import type { SessionStream } from './log.js';
import type { HeaderRecord, SessionRecords, Stats } from './records.js';

export interface LoadedSession {
  header?: HeaderRecord;
  messages: MessageParam[];
  /** A results message synthesized after the last assistant message (its calls never returned). */
  tailFix?: MessageParam;
  repairs: number;
  stats: Stats;
  entries: number;
}

export async function loadSession(records: SessionRecords, stream: SessionStream, warn: (message: string) => void): Promise<LoadedSession> {
  let header: HeaderRecord | undefined;
  let messages: MessageParam[] = [];
  let stats: Stats = { turns: 0, costUsd: 0 };
  let entries = 0;
  for await (const { entryId, text } of stream.read()) {
    entries++;
    const parsed = text === undefined ? { error: 'no record field' } : records.parseRecord(text);
    if ('error' in parsed) {
      warn(`${stream.key}: entry ${entryId} is corrupt (${parsed.error}); skipped`);
      continue;
    }
    if (!('record' in parsed)) continue;
    const record = parsed.record;
    if (record.type === 'header') header ??= record;
    else if (record.type === 'message') {
      messages.push(record.message);
      if (record.stats) stats = record.stats;
    } else if (record.type === 'boundary') {
      messages = [...record.messages];
      stats = record.stats;
    } else stats = record.stats;
  }
  const repaired = records.repairToolPairs(messages);
  return { header, messages: repaired.messages, tailFix: repaired.tailFix, repairs: repaired.fixes, stats, entries };
}
