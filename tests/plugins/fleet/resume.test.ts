/**
 * Whether a task's next run resumes its session (plugins/fleet/resume.ts), read from a real redis-server in
 * session-store-redis's stream format: only a session with a model turn is resumed; what a run that died earlier left
 * is removed.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discardUnstarted, sessionState } from '../../../plugins/fleet/resume.js';
import { formatStatus } from '../../../plugins/fleet/status.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';

const ID = '0b7a1c9e-3f2d-4e5a-9b8c-7d6e5f4a3b2c';
const PREFIX = `keel-fleet:q:run:${ID}:`;
const STREAM = `${PREFIX}session:${ID}`;

let redis: TestRedis;
let conn: Redis;
beforeEach(async () => {
  redis = await startRedis();
  conn = new Redis(redis.url);
});
afterEach(async () => {
  conn.disconnect();
  await redis.cleanup();
});

const header = { type: 'header', version: 1, id: ID, cwd: '/w/1', projectRoot: '/w/1', createdAt: 1 };
const prompt = { type: 'message', message: { role: 'user', content: 'task: do it' } };
const answer = { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'done' }] }, stats: { turns: 1, costUsd: 0 } };
const usage = { type: 'usage', stats: { turns: 0, costUsd: 0.01 } };
const add = async (...records: Array<Record<string, unknown> | string>) => {
  for (const record of records) await conn.xadd(STREAM, '*', 'r', typeof record === 'string' ? record : JSON.stringify(record));
};

describe('resume or start afresh', () => {
  it('no stream: absent', async () => {
    expect(await sessionState(conn, STREAM)).toMatchObject({ kind: 'absent' });
  });

  it('a header, the prompt, usage, corrupt entries, an entry without a record: unstarted, never resumed', async () => {
    await add(header, '{not json', prompt, usage);
    await conn.xadd(STREAM, '*', 'other', 'x');
    expect(await sessionState(conn, STREAM)).toEqual({ kind: 'unstarted', entries: 5, projectRoots: ['/w/1'] });
  });

  it('a model turn, or a compaction boundary carrying the history, makes it resumable, however far down the stream', async () => {
    await add(header, prompt, ...Array.from({ length: 250 }, () => usage), answer);
    expect(await sessionState(conn, STREAM)).toMatchObject({ kind: 'resumable' });
    await conn.del(STREAM);
    await add(header, { type: 'boundary', messages: [prompt.message, answer.message], stats: { turns: 1, costUsd: 0 } });
    expect(await sessionState(conn, STREAM)).toMatchObject({ kind: 'resumable' });
    // An empty boundary is no turn.
    await conn.del(STREAM);
    await add(header, { type: 'boundary', messages: [], stats: { turns: 0, costUsd: 0 } });
    expect(await sessionState(conn, STREAM)).toMatchObject({ kind: 'unstarted' });
  });

  it('discarding removes the stream and its places in the listings, and nothing else under the prefix', async () => {
    await add(header, prompt);
    await conn.zadd(`${PREFIX}sessions`, 1, ID);
    await conn.zadd(`${PREFIX}sessions:project:/w/1`, 1, ID);
    await conn.zadd(`${PREFIX}sessions`, 1, 'a-sub-agent');
    await conn.set(`${STREAM}:lock`, 'held');
    const state = await sessionState(conn, STREAM);
    expect(state.kind).toBe('unstarted');
    await discardUnstarted(conn, PREFIX, ID, state.projectRoots);
    expect(await conn.exists(STREAM)).toBe(0);
    expect(await conn.zrange(`${PREFIX}sessions`, '0', '-1')).toEqual(['a-sub-agent']);
    expect(await conn.exists(`${PREFIX}sessions:project:/w/1`)).toBe(0);
    // The dead run's lock expires by itself; the fresh run waits for it.
    expect(await conn.get(`${STREAM}:lock`)).toBe('held');
  });

  it('keel fleet status says a running task was started afresh', () => {
    const text = formatStatus({
      queue: 'q',
      paused: false,
      counts: { waiting: 0, active: 1, completed: 0, failed: 0, delayed: 0 },
      spentUsd: 0,
      rateLimit: { waiting: 0, limitedForMs: 0 },
      running: [{ id: 't1', turns: 0, costUsd: 0, worker: 'h:1', sessionId: ID, resumed: false, restarted: 'its last run stopped before it recorded a model turn' }],
    } as Parameters<typeof formatStatus>[0]);
    expect(text).toContain('  t1: 0 turns, $0.0000 on h:1 (started afresh: its last run recorded no model turn)');
  });
});
