/** The store's Redis side, loaded when the first session starts: the connection, resume, listing. */
import type { Redis } from 'ioredis';
import { KeelError, visibleControls, type Kernel, type MessageParam, type Session } from '../../kernel/index.js';
import { sessionKeys, type SessionKeys } from './keys.js';
import { SessionStream } from './log.js';
import { loadSession } from './reader.js';
import type { SessionRecords } from './records.js';

/** A session's recorder (session-store's), writing to its stream. */
export type Recorder = ReturnType<SessionRecords['newRecorder']> & { sink: SessionStream };

export interface StoreSettings {
  url: string;
  /** The prefix of every key the store reads and writes. */
  prefix: string;
  lockMs: number;
  now: () => number;
}

export interface SessionSummary {
  id: string;
  lastActivity: number;
  turns: number;
  costUsd: number;
  firstPrompt?: string;
  projectRoot?: string;
}

const NAME = 'session-store-redis';

/** Resolves `--resume <id>`: the id itself, or the one session whose id starts with it. */
async function resolveId(client: Redis, keys: SessionKeys, wanted: string): Promise<string> {
  if ((await client.exists(keys.stream(wanted))) > 0) return wanted;
  const ids = (await client.zrange(keys.all, '0', '-1')).filter((id) => id.startsWith(wanted));
  if (ids.length === 1) return ids[0];
  if (ids.length === 0) throw new KeelError(`no session matches "${wanted}" in Redis (keel sessions lists them)`, { exitCode: 2 });
  throw new KeelError(`"${wanted}" matches ${ids.length} sessions (${ids.slice(0, 3).join(', ')}…); give more of the id`, { exitCode: 2 });
}

export async function openOrResume(records: SessionRecords, kernel: Kernel, client: Redis, session: Session, settings: StoreSettings): Promise<Recorder> {
  const redact = records.createRedactor([kernel.config.apiKey, process.env.ANTHROPIC_API_KEY, process.env.ANTHROPIC_AUTH_TOKEN]);
  const keys = sessionKeys(settings.prefix);
  const onError = (err: Error) => kernel.log('error', `cannot write session ${session.id} to Redis: ${err.message}; this session is no longer saved`, NAME);
  const recorderFor = (id: string, parent?: string, subagent = false): Recorder =>
    records.newRecorder(new SessionStream(client, keys, id, session.projectRoot, redact, onError), records.headerFor(session, settings.now(), parent, subagent), settings.now);
  // A holder that died keeps the lock until its expiry: wait that long, no longer.
  const lockWait = settings.lockMs + 1_000;

  const resume = session.resume;
  if (!resume || (!resume.id && !resume.latest)) {
    if (resume) kernel.log('info', '--resume without an id: starting a new session (keel sessions lists the old ones)', NAME);
    // A given id (`--session-id`) that is taken would mix two conversations in one stream: refused, as by the file store.
    if (await client.exists(keys.stream(session.id))) {
      throw new KeelError(`session id ${session.id} is already in use: resume it with --resume ${session.id}, or leave out --session-id for a new one`, { exitCode: 2 });
    }
    const rec = recorderFor(session.id, session.parentSessionId, Boolean(session.parentSessionId));
    await rec.sink.acquire(settings.lockMs, lockWait);
    return rec;
  }
  const sourceId = resume.id ? await resolveId(client, keys, resume.id) : await newest(client, keys, session.projectRoot);
  if (!resume.fork) session.id = sourceId;
  const rec = recorderFor(session.id, resume.fork ? sourceId : undefined);
  // Resuming in place appends to the stream: take its lock before reading, so no other process is writing it.
  if (!resume.fork) await rec.sink.acquire(settings.lockMs, lockWait);
  try {
    const source = resume.fork ? new SessionStream(client, keys, sourceId, session.projectRoot, redact, onError) : rec.sink;
    const loaded = await loadSession(records, source, (message) => kernel.log('warn', message, NAME));
    records.adoptHistory(session, rec, { ...loaded, id: sourceId, forked: Boolean(resume.fork) }, (message) => kernel.log('info', message, NAME));
    if (resume.fork) {
      await rec.sink.acquire(settings.lockMs, lockWait);
      session.parentSessionId = sourceId;
      records.writeBoundary(session, rec, { trigger: 'fork', from: sourceId });
      await rec.sink.flush();
      return rec;
    }
    rec.sink.headerWritten = loaded.entries > 0;
    if (loaded.header?.parent) rec.header.parent = loaded.header.parent;
    // What came from the stream is in it; a synthesized tail result is written now, so the stream stays valid.
    const inStream = loaded.tailFix ? loaded.messages.length - 1 : loaded.messages.length;
    rec.recorded = inStream;
    rec.last = loaded.messages[inStream - 1] as MessageParam | undefined;
    records.syncMessages(session, rec);
    await rec.sink.flush();
    return rec;
  } catch (err) {
    await rec.sink.release().catch(() => undefined);
    throw err;
  }
}

async function newest(client: Redis, keys: SessionKeys, projectRoot: string): Promise<string> {
  const [id] = await client.zrevrange(keys.project(projectRoot), 0, 0);
  if (!id) throw new KeelError(`no session in Redis for ${projectRoot} to continue`, { exitCode: 2 });
  return id;
}

/** A project's sessions, newest first, read from their streams. */
export async function listSessions(records: SessionRecords, client: Redis, prefix: string, projectRoot: string | undefined): Promise<SessionSummary[]> {
  const keys = sessionKeys(prefix);
  const key = projectRoot ? keys.project(projectRoot) : keys.all;
  const entries = await client.zrevrange(key, 0, 199, 'WITHSCORES');
  const out: SessionSummary[] = [];
  for (let i = 0; i < entries.length; i += 2) {
    const id = entries[i];
    const stream = new SessionStream(client, keys, id, projectRoot ?? '', (t) => t, () => undefined);
    const loaded = await loadSession(records, stream, () => undefined);
    const prompt = records.firstPrompt(loaded.messages);
    out.push({ id, lastActivity: Number(entries[i + 1]), turns: loaded.stats.turns, costUsd: loaded.stats.costUsd, firstPrompt: prompt, projectRoot: loaded.header?.projectRoot });
  }
  return out;
}

export function formatList(sessions: SessionSummary[]): string {
  if (!sessions.length) return 'No sessions in Redis yet.';
  const rows = sessions.map((s) => `${s.id}  ${new Date(s.lastActivity).toISOString().slice(0, 16).replace('T', ' ')}  ${String(s.turns).padStart(5)}  $${s.costUsd.toFixed(4)}  ${visibleControls((s.firstPrompt ?? '').replace(/\s+/g, ' ').slice(0, 60))}`);
  return ['ID                                    LAST ACTIVITY     TURNS     COST  FIRST PROMPT', ...rows].join('\n');
}
