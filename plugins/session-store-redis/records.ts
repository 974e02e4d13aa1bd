/**
 * The session records and recorder are session-store's (its `session-records` service): a session in Redis is the
 * file store's records, one per stream entry (field `r`, its JSON), tool outputs inline (no side files). These are
 * their types, read off the service.
 */
import type { Services } from '../../kernel/index.js';

export type SessionRecords = Services['session-records'];
export type RecordSink = Parameters<SessionRecords['newRecorder']>[0];
export type SessionRecord = Parameters<RecordSink['append']>[0];
export type HeaderRecord = ReturnType<SessionRecords['headerFor']>;
export type Redactor = ReturnType<SessionRecords['createRedactor']>;
export type Stats = ReturnType<SessionRecords['newRecorder']>['base'];
