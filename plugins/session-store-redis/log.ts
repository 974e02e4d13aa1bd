/**
 * One session's stream, the recorder's sink: appends records in order (fire-and-forget from synchronous event taps, awaited at the end
 * of each turn), holds the writer's lock, and reads the records back for a resume.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { KeelError } from '../../kernel/index.js';
import type { SessionKeys } from './keys.js';
import type { HeaderRecord, RecordSink, Redactor, SessionRecord } from './records.js';

const PAGE = 500;

/** Extends the lock when it still holds our token; deletes it likewise. */
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export class SessionStream implements RecordSink {
  private readonly pending = new Set<Promise<unknown>>();
  private lockValue: string | undefined;
  private refresher: NodeJS.Timeout | undefined;
  private error: Error | undefined;
  /** Entries appended (read ones included, when resumed). */
  entries = 0;
  /** Whether the stream has its header (a resumed one does when it had entries). */
  headerWritten = false;

  constructor(
    private readonly client: Redis,
    private readonly keys: SessionKeys,
    readonly id: string,
    private readonly projectRoot: string,
    private readonly redact: Redactor,
    private readonly onError: (err: Error) => void,
  ) {}

  get key(): string {
    return this.keys.stream(this.id);
  }

  ready(header: HeaderRecord): void {
    if (this.headerWritten) return;
    this.headerWritten = true;
    this.append(header);
  }

  /** Queues one record; ioredis sends commands in order, so records land in the order they were made. */
  append(record: SessionRecord): void {
    const text = this.redact(JSON.stringify(record));
    const at = 'at' in record ? record.at : Date.now();
    this.track(this.client.xadd(this.key, '*', 'r', text));
    this.track(this.client.zadd(this.keys.all, at, this.id));
    this.track(this.client.zadd(this.keys.project(this.projectRoot), at, this.id));
    this.entries++;
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.then(
      () => undefined,
      (err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        if (!this.error) {
          this.error = error;
          this.onError(error);
        }
      },
    );
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  /** Resolves once every record queued so far is in Redis (or failed, which was reported). */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  get failed(): boolean {
    return this.error !== undefined;
  }

  /**
   * Takes the writer's lock, waiting up to `waitMs` for a holder that died (kill -9) to let its expiry pass: a live
   * holder keeps extending it, so waiting ends with one line naming who holds it.
   */
  async acquire(lockMs: number, waitMs: number): Promise<void> {
    const value = JSON.stringify({ token: randomUUID(), pid: process.pid, host: hostname() });
    const deadline = Date.now() + waitMs;
    for (;;) {
      const ok = await this.client.set(this.keys.lock(this.id), value, 'PX', lockMs, 'NX');
      if (ok === 'OK') break;
      if (Date.now() >= deadline) {
        const holder = await this.client.get(this.keys.lock(this.id));
        let who = 'another keel process';
        try {
          const parsed = JSON.parse(holder ?? '{}') as { pid?: number; host?: string };
          if (parsed.pid) who = `another keel process (pid ${parsed.pid} on ${parsed.host ?? '?'})`;
        } catch {
          // an unreadable holder is still a holder
        }
        throw new KeelError(`session ${this.id} is in use by ${who}; wait for it to end, or add --fork-session to continue in a copy`, { exitCode: 2 });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, Math.max(10, deadline - Date.now()))));
    }
    this.lockValue = value;
    this.refresher = setInterval(() => {
      this.client.eval(EXTEND, 1, this.keys.lock(this.id), value, lockMs).catch(() => undefined);
    }, Math.max(50, Math.floor(lockMs / 3)));
    this.refresher.unref();
  }

  async release(): Promise<void> {
    if (this.refresher) clearInterval(this.refresher);
    this.refresher = undefined;
    const value = this.lockValue;
    this.lockValue = undefined;
    if (value) await this.client.eval(RELEASE, 1, this.keys.lock(this.id), value);
  }

  /** Every entry in order: its stream id and its record's text. */
  async *read(): AsyncGenerator<{ entryId: string; text: string | undefined }> {
    let start = '-';
    for (;;) {
      const page = await this.client.xrange(this.key, start, '+', 'COUNT', PAGE);
      for (const [entryId, fields] of page) {
        const at = fields.indexOf('r');
        yield { entryId, text: at >= 0 && at % 2 === 0 ? fields[at + 1] : undefined };
      }
      if (page.length < PAGE) return;
      start = `(${page[page.length - 1][0]}`;
    }
  }
}
