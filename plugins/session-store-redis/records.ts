/**
 * The session records, the same shapes as the file store's (plugins/session-store/records.ts): one record per
 * stream entry (field `r`, its JSON), so a session moves between the two stores record for record. Tool outputs
 * stay inline (Redis holds large values; there are no side files).
 */
import type { MessageParam, TokenUsage } from '../../kernel/index.js';

export const FORMAT_VERSION = 1;

export interface Stats {
  turns: number;
  costUsd: number;
  calls?: number;
  usage?: TokenUsage;
}

export interface HeaderRecord {
  type: 'header';
  version: number;
  id: string;
  cwd: string;
  projectRoot: string;
  model: string;
  preset: string;
  createdAt: string;
  parent?: string;
  subagent?: boolean;
}

export interface MessageRecord {
  type: 'message';
  at: number;
  message: MessageParam;
  response?: { id?: string; model: string; stopReason: string | null; usage: TokenUsage; costUsd?: number };
  stats?: Stats;
}

export interface BoundaryRecord {
  type: 'boundary';
  at: number;
  trigger: string;
  preTokens?: number;
  postTokens?: number;
  messages: MessageParam[];
  stats: Stats;
  from?: string;
}

export interface UsageRecord {
  type: 'usage';
  at: number;
  tier: string;
  model: string;
  usage: TokenUsage;
  costUsd: number;
  stats: Stats;
}

export type SessionRecord = HeaderRecord | MessageRecord | BoundaryRecord | UsageRecord;

type Parsed = { record: SessionRecord } | { skip: true } | { error: string };

/** Parses and checks one entry's record. Unknown record types are skipped (written by a newer Keel). */
export function parseRecord(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'not valid JSON' };
  }
  if (!isObject(value) || typeof value.type !== 'string') return { error: 'not a record (no "type")' };
  switch (value.type) {
    case 'header':
      return typeof value.id === 'string' ? { record: value as unknown as HeaderRecord } : { error: 'header without an id' };
    case 'message':
      return isMessage(value.message) ? { record: value as unknown as MessageRecord } : { error: 'message record without a valid message' };
    case 'boundary':
      if (!Array.isArray(value.messages) || !value.messages.every(isMessage)) return { error: 'boundary record without valid messages' };
      return isStats(value.stats) ? { record: value as unknown as BoundaryRecord } : { error: 'boundary record without stats' };
    case 'usage':
      return isStats(value.stats) ? { record: value as unknown as UsageRecord } : { error: 'usage record without stats' };
    default:
      return { skip: true };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isMessage(value: unknown): value is MessageParam {
  return (
    isObject(value) &&
    (value.role === 'user' || value.role === 'assistant' || value.role === 'system') &&
    (typeof value.content === 'string' || (Array.isArray(value.content) && value.content.every(isObject)))
  );
}

function isStats(value: unknown): value is Stats {
  return isObject(value) && typeof value.turns === 'number' && typeof value.costUsd === 'number';
}

export function firstPrompt(messages: MessageParam[]): string | undefined {
  for (const message of messages) {
    if (message.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    for (const block of message.content) if (block.type === 'text' && block.text) return block.text;
  }
  return undefined;
}
