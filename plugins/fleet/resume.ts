/**
 * Whether a task's next run resumes its session or starts it afresh. A run that died before it recorded a model turn
 * (OOM, kill -9, a crash at start) left no session, or one with a header and at most the prompt: `--resume` of it would
 * fail ("no such session") or hand the model a history without its task, on every retry. So a run resumes only a
 * session in the run's own store (session-store-redis under the task's prefix) that holds a model turn; otherwise the
 * leftovers are removed and the run starts afresh under the same session id (results and stream stay under one id).
 *
 * Reads session-store-redis's documented keys and records (plugins/session-store-redis/keys.ts; the README's session
 * file format): a stream entry's field `r` is a record's JSON, `type` first.
 */
import type { Redis } from 'ioredis';

export type SessionState =
  /** Nothing was recorded. */
  | { kind: 'absent' }
  /** A header, the prompt, usage: no model turn, nothing worth resuming. */
  | { kind: 'unstarted'; entries: number }
  /** At least one model turn (or a compaction boundary carrying turns): resume it. */
  | { kind: 'resumable' };

const PAGE = 100;

interface RecordShape {
  type?: unknown;
  message?: { role?: unknown };
  messages?: unknown;
  projectRoot?: unknown;
}

function parse(text: string | undefined): RecordShape | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as RecordShape) : undefined;
  } catch {
    return undefined;
  }
}

const holdsTurn = (record: RecordShape): boolean =>
  (record.type === 'message' && record.message?.role === 'assistant') || (record.type === 'boundary' && Array.isArray(record.messages) && record.messages.length > 0);

/** Reads the stream from its start until its first model turn (a resumable session shows one within a few entries). */
export async function sessionState(redis: Redis, stream: string): Promise<SessionState & { projectRoots: string[] }> {
  const projectRoots: string[] = [];
  let entries = 0;
  let start = '-';
  for (;;) {
    const page = await redis.xrange(stream, start, '+', 'COUNT', PAGE);
    for (const [, fields] of page) {
      entries++;
      const at = fields.indexOf('r');
      const record = parse(at >= 0 && at % 2 === 0 ? fields[at + 1] : undefined);
      if (!record) continue;
      if (holdsTurn(record)) return { kind: 'resumable', projectRoots };
      if (record.type === 'header' && typeof record.projectRoot === 'string') projectRoots.push(record.projectRoot);
    }
    if (page.length < PAGE) break;
    start = `(${page[page.length - 1][0]}`;
  }
  return entries ? { kind: 'unstarted', entries, projectRoots } : { kind: 'absent', projectRoots };
}

/**
 * Removes what a run that never got to a model turn left under the task's prefix: its stream and its places in the
 * listings (the fresh run records them again). Its lock is left alone: it expires by itself, and the fresh run waits
 * for it.
 */
export async function discardUnstarted(redis: Redis, prefix: string, sessionId: string, projectRoots: string[]): Promise<void> {
  const batch = redis.multi().del(`${prefix}session:${sessionId}`).zrem(`${prefix}sessions`, sessionId);
  for (const root of projectRoots) batch.zrem(`${prefix}sessions:project:${root}`, sessionId);
  await batch.exec();
}
