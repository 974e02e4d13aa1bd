/**
 * A task's own Redis user (plugins/fleet/task-user.ts) against a real redis-server: it reaches its task's keys with
 * the commands session-store-redis sends, and nothing of another task, the queue, the broker, the fleet's counters or
 * the cancel channel; it cannot list keys, flush, run a script over other keys or change ACLs.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fleetKeys } from '../../../plugins/fleet/keys.js';
import { resolveSettings, type FleetSettings } from '../../../plugins/fleet/settings.js';
import { checkTaskUsers, createTaskUser } from '../../../plugins/fleet/task-user.js';
import { redactUrl } from '../../../plugins/redis/redact.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';

let redis: TestRedis;
let admin: Redis;
const clients: Redis[] = [];
let settings: FleetSettings;

beforeEach(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
  settings = resolveSettings({ redisUrl: redis.url, queue: 'q' }, undefined) as FleetSettings;
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  admin.disconnect();
  await redis.cleanup();
});

function connectAs(url: string): Redis {
  // No retries: a refused connection is an answer here.
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}

const keys = fleetKeys('q');
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

describe("a task's Redis user", () => {
  it("writes and reads its own task's keys with the session store's commands", async () => {
    const a = randomUUID();
    const user = await createTaskUser(admin, settings, a);
    const run = connectAs(user.url);
    const prefix = keys.runPrefix(a);
    expect(keys.runStream(a)).toBe(`${prefix}session:${a}`);
    await expect(run.xadd(keys.runStream(a), '*', 'r', '{}')).resolves.toMatch(/-/);
    await expect(run.xrange(keys.runStream(a), '-', '+')).resolves.toHaveLength(1);
    await expect(run.exists(keys.runStream(a))).resolves.toBe(1);
    await expect(run.zadd(`${prefix}sessions`, Date.now(), a)).resolves.toBe(1);
    await expect(run.zrevrange(`${prefix}sessions`, 0, 0)).resolves.toEqual([a]);
    // A sub-agent's session of the same task lives under the same prefix.
    await expect(run.xadd(`${prefix}session:${randomUUID()}`, '*', 'r', '{}')).resolves.toMatch(/-/);
    const lock = `${prefix}session:${a}:lock`;
    await expect(run.set(lock, 'me', 'PX', 1000, 'NX')).resolves.toBe('OK');
    await expect(run.eval(EXTEND, 1, lock, 'me', 2000)).resolves.toBe(1);
    await expect(run.get(lock)).resolves.toBe('me');
    await expect(run.del(lock)).resolves.toBe(1);
  });

  it("cannot touch another task's keys, the queue, the broker, the fleet's keys or channels, or list and flush keys", async () => {
    const a = randomUUID();
    const b = randomUUID();
    const userA = await createTaskUser(admin, settings, a);
    await createTaskUser(admin, settings, b);
    await admin.xadd(keys.runStream(b), '*', 'r', '{"canary":true}');
    await admin.set(keys.spent, '1.5');
    const run = connectAs(userA.url);
    const bStream = keys.runStream(b);
    const bPrefix = keys.runPrefix(b);
    const denied: Array<[string, () => Promise<unknown>]> = [
      ["XADD to the other task's session stream", () => run.xadd(bStream, '*', 'r', '{}')],
      ["XRANGE of the other task's session stream", () => run.xrange(bStream, '-', '+')],
      ["SET of the other task's session lock", () => run.set(`${bPrefix}session:${b}:lock`, 'x')],
      ["DEL of the other task's session stream", () => run.del(bStream)],
      ["ZADD to the other task's listing", () => run.zadd(`${bPrefix}sessions`, 1, 'x')],
      ['XADD to a session stream outside any task (the old shared keel:session:*)', () => run.xadd(`keel:session:${b}`, '*', 'r', '{}')],
      ["SET of the fleet's spent counter", () => run.set(keys.spent, '0')],
      ["SET of the fleet's budget stop", () => run.set(keys.budgetStop, 'x')],
      ["SET of the other task's work in progress", () => run.set(keys.wip('b'), 'x')],
      ['SADD to the cancelled set', () => run.sadd(keys.cancelled, 'x')],
      ["XADD to the queue's event stream", () => run.xadd('bull:q:events', '*', 'event', 'completed')],
      ["LPUSH to the queue's waiting list", () => run.lpush('bull:q:wait', 'x')],
      ["DEL of a job's hash", () => run.del('bull:q:t1')],
      ["XADD to the broker's request queue events", () => run.xadd(`bull:${keys.requestQueue}:events`, '*', 'event', 'completed')],
      ["DEL of the broker's rate limiter", () => run.del(`bull:${keys.requestQueue}:limiter`)],
      ['PUBLISH on the cancel channel', () => run.publish(keys.cancelChannel, '*')],
      ['SUBSCRIBE to the cancel channel', () => connectAs(userA.url).subscribe(keys.cancelChannel)],
      ['KEYS', () => run.keys('*')],
      ['SCAN', () => run.scan('0')],
      ['FLUSHALL', () => run.flushall()],
      ["EVAL writing the other task's stream from a script", () => run.eval(`return redis.call('xadd', KEYS[1], '*', 'r', '{}')`, 1, bStream)],
      ['EVAL writing an undeclared key from a script', () => run.eval(`return redis.call('set', '${keys.spent}', '0')`, 0)],
      ['ACL SETUSER to widen itself', () => run.call('ACL', 'SETUSER', `keel-run-${a}`, 'allkeys', '+@all')],
      ['CONFIG SET', () => run.call('CONFIG', 'SET', 'appendonly', 'no')],
    ];
    for (const [what, attempt] of denied) {
      const error = await attempt().then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect({ what, error }).toEqual({ what, error: expect.stringMatching(/NOPERM|can't access|no permissions/) });
    }
    // Nothing of B's or the fleet's changed.
    expect(await admin.xlen(bStream)).toBe(1);
    expect(await admin.get(keys.spent)).toBe('1.5');
  });

  it('is deleted when its run ends (its connections with it), and a new one for the same task replaces a stale one', async () => {
    const a = randomUUID();
    const first = await createTaskUser(admin, settings, a);
    const stale = connectAs(first.url);
    await expect(stale.exists(keys.runStream(a))).resolves.toBe(0);
    // A worker takes the task over: the user is made anew; the old password and connection no longer work.
    const second = await createTaskUser(admin, settings, a);
    expect(second.url).not.toBe(first.url);
    await expect(stale.exists(keys.runStream(a))).rejects.toThrow();
    await expect(connectAs(first.url).exists(keys.runStream(a))).rejects.toThrow();
    const current = connectAs(second.url);
    await expect(current.exists(keys.runStream(a))).resolves.toBe(0);
    await second.remove();
    await expect(current.exists(keys.runStream(a))).rejects.toThrow();
    expect((await admin.call('ACL', 'USERS')) as string[]).toEqual(['default']);
  });

  it("keeps the URL's host, port, database and TLS scheme, with the task's user and password", async () => {
    const user = await createTaskUser(admin, { ...settings, runRedisUrl: `redis://:secret@127.0.0.1:${redis.port}/0` }, randomUUID());
    const url = new URL(user.url);
    expect(url.protocol).toBe('redis:');
    expect(url.host).toBe(`127.0.0.1:${redis.port}`);
    expect(url.pathname).toBe('/0');
    expect(url.username).toMatch(/^keel-run-[0-9a-f-]{36}$/);
    expect(url.password).toMatch(/^[0-9a-f]{64}$/);
    // SELECT of the database is allowed: the connection works.
    await expect(connectAs(user.url).exists('x')).rejects.toThrow(/NOPERM|no permissions/);
  });

  it("a worker whose Redis user may not manage ACLs stops at start with one line saying what to do", async () => {
    await admin.call('ACL', 'SETUSER', 'worker', 'on', '>w', 'allkeys', 'allchannels', '+@all', '-acl');
    const worker = connectAs(`redis://worker:w@127.0.0.1:${redis.port}`);
    const error = await checkTaskUsers(worker, { ...settings, redisUrl: `redis://worker:w@127.0.0.1:${redis.port}` }, 'host:1', redactUrl).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(error).toBe(
      `fleet work: cannot create a Redis user for each task at redis://worker:***@127.0.0.1:${redis.port} (ACL SETUSER: NOPERM this user has no permissions to run the 'acl|setuser' command); give the worker's Redis user the acl command, or set fleet.taskUsers to false (every run then shares fleet.runRedisUrl's user)`,
    );
  });
});
