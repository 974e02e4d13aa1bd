/**
 * The JSONL record shapes and their checks. Every record is one JSON object on one line whose first key is
 * `type`, so a boundary can be found by its prefix without parsing (see reader.ts).
 */
import type { MessageParam, TokenUsage } from '../../kernel/index.js';

export const FORMAT_VERSION = 1;

/** Running totals, carried by records that change them so the newest one tells the whole story. */
export interface Stats {
  /** Model turns (assistant messages) so far. */
  turns: number;
  costUsd: number;
  /** Model calls of every tier with their token use (absent in files written before they were kept). */
  calls?: number;
  usage?: TokenUsage;
  /** The session's permission mode when this was written, so a resume keeps it (absent in older files). */
  permissionMode?: string;
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
  /** The session this one was forked from, or (with `subagent`) the session whose `agent` call started it. */
  parent?: string;
  /** A sub-agent's session: never "the newest" for `--continue`, and left out of listings unless asked. */
  subagent?: boolean;
}

/** A tool output moved to a side file: block `b` of message `m` (boundary records) or of the record's message. */
export interface SideRef {
  m?: number;
  b: number;
  file: string;
}

export interface MessageRecord {
  type: 'message';
  at: number;
  message: MessageParam;
  refs?: SideRef[];
  /** For assistant messages: what the provider reported about the call. */
  response?: { id?: string; model: string; stopReason: string | null; usage: TokenUsage; costUsd?: number };
  stats?: Stats;
}

export interface BoundaryRecord {
  type: 'boundary';
  at: number;
  /** This record's own 1-based line number, so warnings after it can name absolute lines (stores with lines only). */
  line?: number;
  trigger: string;
  preTokens?: number;
  postTokens?: number;
  messages: MessageParam[];
  refs?: SideRef[];
  stats: Stats;
  /** For a fork's first boundary: the session it was copied from. */
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

export const BOUNDARY_PREFIX = '{"type":"boundary",';
export const SIDE_FILE = /^[A-Za-z0-9_.-]+\.json$/;

type Parsed = { record: SessionRecord } | { skip: true } | { error: string };

/** Parses and checks one line. Unknown record types are skipped (written by a newer Keel). */
export function parseRecord(line: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: 'not valid JSON' };
  }
  if (!isObject(value) || typeof value.type !== 'string') return { error: 'not a record (no "type")' };
  switch (value.type) {
    case 'header':
      return typeof value.id === 'string' ? { record: value as unknown as HeaderRecord } : { error: 'header without an id' };
    case 'message':
      const problem = messageProblem(value.message);
      if (problem) return { error: `message record with ${problem}` };
      if (!validRefs(value.refs)) return { error: 'message record with invalid side-file refs' };
      // Running totals that do not add up (a hand-edited file) are left out; the message itself is kept.
      if (value.stats !== undefined && !isStats(value.stats)) delete value.stats;
      return { record: value as unknown as MessageRecord };
    case 'boundary':
      if (!Array.isArray(value.messages)) return { error: 'boundary record without messages' };
      for (const [m, message] of value.messages.entries()) {
        const problem = messageProblem(message);
        if (problem) return { error: `boundary record with ${problem} (message ${m + 1})` };
      }
      if (!validRefs(value.refs)) return { error: 'boundary record with invalid side-file refs' };
      if (!isStats(value.stats)) return { error: 'boundary record without stats' };
      return { record: value as unknown as BoundaryRecord };
    case 'usage':
      return isStats(value.stats) ? { record: value as unknown as UsageRecord } : { error: 'usage record without stats' };
    default:
      return { skip: true };
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What makes `value` no message the loop and the API can take (a hand-edited or foreign file), or undefined.
 * Blocks of the types Keel writes must carry the fields every reader of a history relies on; blocks of other
 * types pass (a newer Keel's), as long as they name their type.
 */
function messageProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'no message';
  if (value.role !== 'user' && value.role !== 'assistant' && value.role !== 'system') return 'a message of no known role';
  if (typeof value.content === 'string') return undefined;
  if (!Array.isArray(value.content)) return 'a message without content';
  for (const [b, block] of value.content.entries()) {
    const problem = blockProblem(block);
    if (problem) return `${problem} (block ${b + 1})`;
  }
  return undefined;
}

/** What makes `content` no tool output (a tool_result's content, from a record or a side file), or undefined. */
export function toolOutputProblem(content: unknown): string | undefined {
  if (content === undefined || typeof content === 'string') return undefined;
  if (!Array.isArray(content)) return 'content that is neither text nor blocks';
  for (const part of content) {
    const problem = blockProblem(part);
    if (problem) return problem;
  }
  return undefined;
}

function blockProblem(block: unknown): string | undefined {
  if (!isObject(block) || typeof block.type !== 'string') return 'a content block without a type';
  const has = (key: string) => typeof block[key] === 'string';
  switch (block.type) {
    case 'text':
      return has('text') ? undefined : 'a text block without its text';
    case 'thinking':
      return has('thinking') ? undefined : 'a thinking block without its text';
    case 'redacted_thinking':
      return has('data') ? undefined : 'a redacted_thinking block without its data';
    case 'image':
    case 'document':
      return isObject(block.source) ? undefined : `${block.type === 'image' ? 'an image' : 'a document'} block without a source`;
    case 'tool_use':
    case 'server_tool_use':
      return has('id') && has('name') ? undefined : `a ${block.type} block without an id and a name`;
    case 'web_search_tool_result':
      return has('tool_use_id') ? undefined : `a ${block.type} block without its tool_use_id`;
    case 'tool_result': {
      if (!has('tool_use_id')) return 'a tool_result block without its tool_use_id';
      const problem = toolOutputProblem(block.content);
      return problem && `${problem} in a tool_result`;
    }
    default:
      return undefined;
  }
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const;
const isUsage = (value: unknown): boolean => isObject(value) && USAGE_KEYS.every((key) => isCount(value[key]));

/** Totals that listings, `/cost` and the footer can do arithmetic on: finite, non-negative numbers throughout. */
function isStats(value: unknown): value is Stats {
  return (
    isObject(value) &&
    isCount(value.turns) &&
    isCount(value.costUsd) &&
    (value.calls === undefined || isCount(value.calls)) &&
    (value.usage === undefined || isUsage(value.usage)) &&
    (value.permissionMode === undefined || typeof value.permissionMode === 'string')
  );
}

function validRefs(value: unknown): boolean {
  if (value === undefined) return true;
  return (
    Array.isArray(value) &&
    value.every((ref) => isObject(ref) && Number.isInteger(ref.b) && (ref.m === undefined || Number.isInteger(ref.m)) && typeof ref.file === 'string' && SIDE_FILE.test(ref.file))
  );
}

/** The first user text of a message list: what a session is about, for listings. */
export function firstPrompt(messages: MessageParam[]): string | undefined {
  for (const message of messages) {
    if (message.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    for (const block of message.content) if (block.type === 'text' && block.text) return block.text;
  }
  return undefined;
}
