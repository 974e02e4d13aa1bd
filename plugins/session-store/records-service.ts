/**
 * The storage-backend extension point. session-store keeps the record format and its checks, the repair rules,
 * redaction and the recorder, and offers them as the `session-records` service; a plugin that keeps sessions
 * elsewhere (session-store-redis) records through them into its own `RecordSink` and provides a
 * `session-backend`, and session-store then writes no files and hands it its service and `sessions` command.
 */
import type { Session } from '../../kernel/index.js';
import { adoptHistory, headerFor, newRecorder, recordEvent, sessionOfEvent, syncMessages, writeBoundary } from './recorder.js';
import { FORMAT_VERSION, firstPrompt, parseRecord } from './records.js';
import { repairToolPairs } from './repair.js';
import { createRedactor } from './secrets.js';

export const sessionRecords = {
  FORMAT_VERSION,
  parseRecord,
  firstPrompt,
  repairToolPairs,
  createRedactor,
  newRecorder,
  adoptHistory,
  headerFor,
  syncMessages,
  writeBoundary,
  recordEvent,
  sessionOfEvent,
};

export type SessionRecordsService = typeof sessionRecords;

/** A store for sessions other than files. */
export interface SessionBackend {
  /** The `sessions` command's description while this backend keeps the sessions. */
  sessionsDescription: string;
  /** The `sessions` command's output (`args`: its words, such as --json and --all). */
  sessionsCommand(args: string, session: Session): Promise<string>;
  /** Where a session is kept, for /status. */
  whereIs(session: Session): string;
  list(projectRoot: string, opts?: { all?: boolean }): Promise<unknown[]>;
  close(session: Session): void;
  persist(session: Session): void;
}
