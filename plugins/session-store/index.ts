/**
 * session-store: every session as an append-only JSONL file under `$KEEL_HOME/sessions/<project>/`, written
 * record by record as the loop produces them, so a `kill -9` at any instant loses at most the record being
 * written; resume, continue and fork rebuild `session.messages` from the last compaction boundary.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import {
  normalizePermissionMode,
  definePlugin,
  errorMessage,
  KeelError,
  Stage,
  type Kernel,
  type MessageParam,
  type Session,
} from '../../kernel/index.js';
import { formatList, listJson, listSessions, pickable } from './list.js';
import { History, historyFile } from './prompt-history.js';
import { projectDir, sessionFile, sideDir } from './paths.js';
import { SessionLockedError } from './lock.js';
import { loadSession, type LoadedSession, type SessionSummary } from './reader.js';
import { FileSink } from './file-sink.js';
import { adoptHistory, headerFor, newRecorder, recordEvent, sessionOfEvent, syncMessages, writeBoundary, type Recorder } from './recorder.js';
import { sessionRecords, type SessionBackend, type SessionRecordsService } from './records-service.js';
import { newestSessionId, resolveSessionId } from './resolve.js';
import { createRedactor } from './secrets.js';
import { SessionWriter } from './writer.js';
import { transcript } from './user-items.js';

const NAME = 'session-store';

export interface SessionsConfig {
  /** fdatasync the session file at the end of every turn (default true). */
  fsync?: boolean;
  /** Tool outputs whose JSON is larger than this many bytes go to a side file (default 16384). */
  sideFileBytes?: number;
}

export interface SessionStoreOptions extends SessionsConfig {
  /** The clock stamped on records (tests inject one). */
  now?: () => number;
}

/** What other plugins (an interactive picker, an SDK host) may ask of the store. */
export interface SessionStoreService {
  /** The sessions of a project, newest first; sub-agents' and empty ones only with `all`. */
  list(projectRoot: string, opts?: { all?: boolean }): Promise<SessionSummary[]>;
  /** The JSONL file a session is recorded in. */
  fileOf(session: Session): string | undefined;
  /** Flushes and closes a session's file (it reopens on the next record). */
  close(session: Session): void;
  /** Writes the live history now (a history rewritten outside a turn, such as by /rewind, becomes a boundary). */
  persist(session: Session): void;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    sessions?: SessionsConfig;
  }
}

declare module '../../kernel/types.js' {
  interface Services {
    /** The record format, repair rules, redaction and recorder, for a session backend (see records-service.ts). */
    'session-records': SessionRecordsService;
    /** A store that keeps sessions elsewhere than files; session-store then hands it its work. */
    'session-backend': SessionBackend;
  }
}

const configSchema = z
  .object({ fsync: z.boolean().optional(), sideFileBytes: z.number().int().positive().optional() })
  .strict();

/** Sessions kept for matching events to their session; older ones fall off (events carry no session). */
const TRACKED = 32;

export default definePlugin((opts: SessionStoreOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { sessions: configSchema },
  apply(kernel) {
    const tracked: Session[] = [];
    let lastActive: Session | undefined;
    const settings = () => {
      const fromConfig = kernel.config.sessions ?? {};
      return {
        fsync: opts.fsync ?? fromConfig.fsync ?? true,
        sideFileBytes: opts.sideFileBytes ?? fromConfig.sideFileBytes ?? 16_384,
        now: opts.now ?? Date.now,
      };
    };
    const dirOf = (projectRoot: string) => projectDir(kernel.config.keelHome, projectRoot);
    // Provided (or not) by a later plugin, so looked up when needed.
    const backend = () => kernel.services.get('session-backend');

    kernel.hooks.sessionStart.tapPromise({ name: NAME, stage: Stage.EARLY }, async (session) => {
      if (backend()) return;
      const rec = await openOrResume(kernel, session, dirOf(session.projectRoot), settings());
      session.data.set(NAME, rec);
      tracked.push(session);
      if (tracked.length > TRACKED) tracked.shift();
      lastActive = session;
    });

    kernel.hooks.event.tap(NAME, (event) => {
      const session = sessionOfEvent(event, tracked) ?? lastActive;
      const rec = session && recorderOf(session);
      if (!session || !rec || rec.failed) return;
      lastActive = session;
      guarded(kernel, rec, () => recordEvent(event, session, rec));
    });

    kernel.hooks.postTurn.tapPromise({ name: NAME, stage: Stage.LATE }, async (_record, turn) => {
      const rec = recorderOf(turn.session);
      if (!rec || rec.failed) return;
      guarded(kernel, rec, () => {
        syncMessages(turn.session, rec);
        rec.sink.writer.sync();
      });
    });

    kernel.commands.register({
      name: 'sessions',
      get description() {
        return backend()?.sessionsDescription ?? "list this project's sessions (id, last activity, turns, cost, first prompt); --json for JSON, --all with sub-agents' and empty ones";
      },
      async run(args, ctx) {
        const other = backend();
        if (other) return other.sessionsCommand(args, ctx.session);
        const words = args.split(/\s+/);
        const dir = dirOf(ctx.session.projectRoot);
        const every = await listSessions(dir, { all: true });
        const summaries = words.includes('--all') ? every : every.filter(pickable);
        if (words.includes('--json')) return listJson(summaries);
        // On a terminal, with a build that has a UI, the hint opens it; piped, it shows a headless run.
        const ui = ctx.kernel.modes.list().some((m) => m.name === 'interactive' || m.name.startsWith('interactive:'));
        return formatList(summaries, ctx.session.projectRoot, ui && Boolean(process.stdout.isTTY), every.length - summaries.length);
      },
    });

    kernel.commands.register({
      name: 'status',
      description: 'show this session: id, file, models, permission mode, folder, messages, context and cost',
      async run(_args, ctx) {
        const session = ctx.session;
        const state = kernel.state.get();
        const context = state.contextWindow ? `${state.contextTokens} / ${state.contextWindow} tokens (${Math.round((100 * state.contextTokens) / state.contextWindow)}%)` : `${state.contextTokens} tokens`;
        return [
          `Session: ${session.id}${session.resumedFrom ? ` (resumed from ${session.resumedFrom})` : ''}`,
          backend() ? `Stored in: ${backend()!.whereIs(session)}` : `File: ${recorderOf(session)?.sink.writer.file ?? '(nothing recorded yet)'}`,
          `Model: ${session.model} (small: ${session.smallModel})`,
          `Permission mode: ${session.permissionMode}`,
          `Folder: ${session.cwd}`,
          `Messages: ${session.messages.length}`,
          `Context: ${context}`,
          `Cost: $${state.cost.toFixed(4)}`,
        ].join('\n');
      },
    });

    const service: SessionStoreService = {
      list: (projectRoot, opts) => (backend()?.list(projectRoot, opts) as Promise<SessionSummary[]> | undefined) ?? listSessions(dirOf(projectRoot), opts),
      fileOf: (session) => recorderOf(session)?.sink.writer.file,
      close(session) {
        backend()?.close(session);
        const rec = recorderOf(session);
        if (!rec) return;
        guarded(kernel, rec, () => rec.sink.writer.sync());
        rec.sink.writer.close();
      },
      persist(session) {
        backend()?.persist(session);
        const rec = recorderOf(session);
        if (!rec || rec.failed) return;
        guarded(kernel, rec, () => {
          syncMessages(session, rec);
          rec.sink.writer.syncNow();
        });
      },
    };
    kernel.services.provide(NAME, service);
    kernel.services.provide('session-records', sessionRecords);
    kernel.services.provide('transcript', transcript);
    kernel.services.provide('promptHistory', { open: () => new History(historyFile(kernel.config.keelHome, kernel.config.projectRoot)) });
  },
}));

/** A file recorder; `failed` is set after a write failed: the session is no longer saved, and that was reported once. */
type FileRecorder = Recorder<FileSink> & { failed: boolean };

function recorderOf(session: Session): FileRecorder | undefined {
  return session.data.get(NAME) as FileRecorder | undefined;
}

/** A failed write (disk full, permissions) is reported once; the session goes on unsaved. */
function sessionIdInUse(id: string): KeelError {
  return new KeelError(`session id ${id} is already in use: resume it with --resume ${id}, or leave out --session-id for a new one`, { exitCode: 2 });
}

function guarded(kernel: Kernel, rec: FileRecorder, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    unsaved(kernel, rec, err);
  }
}

function unsaved(kernel: Kernel, rec: FileRecorder, err: unknown): void {
  rec.failed = true;
  kernel.log('error', `cannot write session file ${rec.sink.writer.file}: ${errorMessage(err)}; this session is no longer saved`, NAME);
}

async function openOrResume(
  kernel: Kernel,
  session: Session,
  dir: string,
  cfg: { fsync: boolean; sideFileBytes: number; now: () => number },
): Promise<FileRecorder> {
  const redact = createRedactor([kernel.config.apiKey, process.env.ANTHROPIC_API_KEY, process.env.ANTHROPIC_AUTH_TOKEN]);
  const recorderFor = (id: string, parent?: string, subagent = false): FileRecorder => {
    const sink = new FileSink(
      new SessionWriter(sessionFile(dir, id), { fsync: cfg.fsync, redact, id }),
      { dir: sideDir(dir, id), threshold: cfg.sideFileBytes, fsync: cfg.fsync, redact },
    );
    return Object.assign(newRecorder(sink, headerFor(session, cfg.now(), parent, subagent), cfg.now), { failed: false });
  };

  const resume = session.resume;
  if (!resume || (!resume.id && !resume.latest)) {
    if (resume) kernel.log('info', '--resume without an id: starting a new session (keel sessions lists the old ones)', NAME);
    // A new session's id is random unless given (`--session-id`): a given one that is taken would mix two
    // conversations in one file, so it is refused.
    if (existsSync(sessionFile(dir, session.id))) throw sessionIdInUse(session.id);
    // A sub-agent's session names its parent's in its header.
    return recorderFor(session.id, session.parentSessionId, Boolean(session.parentSessionId));
  }
  const sourceId = resume.id ? resolveSessionId(dir, resume.id) : await newestSessionId(dir);
  // Resuming in place appends to the file: take its lock before reading, so no other process is writing it.
  if (!resume.fork) session.id = sourceId;
  const rec = recorderFor(session.id, resume.fork ? sourceId : undefined);
  if (!resume.fork) {
    try {
      rec.sink.writer.acquire();
    } catch (err) {
      // Another live writer stops the run; a lock that cannot be written (a full disk, a read-only KEEL_HOME)
      // does not: the session resumes from its file, which stays as it was, and goes on unsaved.
      if (err instanceof SessionLockedError) throw err;
      unsaved(kernel, rec, err);
    }
  }
  let loaded: LoadedSession;
  try {
    // The print frontend listens before sessionStart, so these warnings reach the user as they happen.
    loaded = await loadSession(sessionFile(dir, sourceId), { sideDir: sideDir(dir, sourceId), warn: (message) => kernel.log('warn', message, NAME) });
  } catch (err) {
    rec.sink.writer.close();
    throw err;
  }
  adoptHistory(session, rec, { ...loaded, id: sourceId, forked: Boolean(resume.fork) }, (message) => kernel.log('info', message, NAME));
  // The session keeps its permission mode (Shift+Tab, /permissions, an approved plan), unless a flag names one now.
  const mode = normalizePermissionMode(loaded.stats.permissionMode ?? '');
  if (mode && kernel.config.sources.permissionMode !== 'flags') session.permissionMode = mode;

  if (resume.fork) {
    session.parentSessionId = sourceId;
    guarded(kernel, rec, () => {
      writeBoundary(session, rec, { trigger: 'fork', from: sourceId });
      rec.sink.writer.sync();
    });
    return rec;
  }
  if (rec.failed) return rec;
  rec.sink.writer.lines = loaded.lines;
  if (loaded.header?.parent) rec.header.parent = loaded.header.parent;
  if (loaded.header?.subagent) rec.header.subagent = true;
  // What came from the file is on file; a synthesized tail result is written now, so the file stays valid.
  const onFile = loaded.tailFix ? loaded.messages.length - 1 : loaded.messages.length;
  rec.recorded = onFile;
  rec.last = loaded.messages[onFile - 1] as MessageParam | undefined;
  guarded(kernel, rec, () => {
    rec.sink.writer.open();
    syncMessages(session, rec);
    rec.sink.writer.sync();
  });
  return rec;
}
