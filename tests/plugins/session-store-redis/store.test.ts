/** session-store-redis against a real Redis: records, resume, repair rules, the writer's lock, secrets. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { definePlugin, defineTool, runAgent, z, type AgentEvent, type Kernel, type Session, type SessionInit } from '../../../kernel/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import redisPlugin from '../../../plugins/redis/index.js';
import permissions from '../../../plugins/permissions/index.js';
import sessionStoreRedis from '../../../plugins/session-store-redis/index.js';
import sessionStore from '../../../plugins/session-store/index.js';
import { callTool, plainMessages, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { taskUserRules } from '../../../plugins/fleet/task-user.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { until } from '../../helpers/until.js';

const API_KEY = 'sk-ant-api03-SECRETSECRETSECRET-test';
const SESSION = '3f2a9c1e-0b7d-4c51-9d2e-5b8f4f0c2a11';

let redis: TestRedis;
let conn: Redis;
let ws: Workspace;
let server: ScriptedServer | undefined;

beforeEach(async () => {
  redis = await startRedis();
  conn = new Redis(redis.url);
  ws = makeWorkspace();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  conn.disconnect();
  await redis.cleanup();
  ws.cleanup();
});

const echo = definePlugin(() => ({
  name: 'test-tools',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.tools.register(
      defineTool({ name: 'echo', description: 'returns its input', permission: 'read', input: z.object({ text: z.string() }), execute: async ({ text }) => ({ content: text }) }),
    );
  },
}));

function harness(lockMs = 1_000, store: { url?: string; prefix?: string } = {}): { kernel: Kernel; warnings(): string[]; start(init?: Partial<SessionInit>): Promise<Session>; close(session: Session): Promise<void> } {
  const events: AgentEvent[] = [];
  const log = definePlugin(() => ({ name: 'event-log', kernel: '^1.0.0', apply: (k) => k.hooks.event.tap('event-log', (e) => void events.push(e)) }));
  const kernel = testKernel([queryAnthropic(), permissions(), echo(), sessionStore(), redisPlugin(), sessionStoreRedis({ url: store.url ?? redis.url, lockMs, prefix: store.prefix }), log()], {
    apiKey: API_KEY,
    baseURL: server!.url,
    keelHome: ws.home,
    cwd: ws.dir,
    projectRoot: ws.dir,
    permissionMode: 'auto',
  });
  return {
    kernel,
    warnings: () => events.flatMap((e) => (e.type === 'log' && e.level === 'warn' ? [e.message] : [])),
    start: (init = {}) => testSession(kernel, { id: SESSION, ...init }),
    async close(session) {
      (kernel.services.get('session-store') as { close(s: Session): void }).close(session);
      // close() lets go of the lock once every record is in: wait for that.
      await until(async () => !(await conn.exists(`${store.prefix ?? 'keel:'}session:${session.id}:lock`)), 'the session lock to be released');
    },
  };
}

async function records(id = SESSION): Promise<Array<Record<string, any>>> {
  const entries = await conn.xrange(`keel:session:${id}`, '-', '+');
  return entries.map(([, fields]) => JSON.parse(fields[1]));
}

describe('session-store-redis', () => {
  it("keeps every key under its prefix, so a Redis user confined to the prefix (a fleet task's) runs, resumes and lists sessions", async () => {
    server = await startAnthropicServer([callTool('echo', { text: 'pong' }), say('first done'), say('second done')]);
    const prefix = 'keel-fleet:q:run:task-1:';
    // The rules a fleet worker gives a task's run.
    await conn.call('ACL', 'SETUSER', 'task', ...taskUserRules(prefix, 'pw'));
    const url = `redis://task:pw@127.0.0.1:${redis.port}`;
    const one = harness(1_000, { url, prefix });
    const session = await one.start();
    await runAgent(one.kernel, session, 'ping');
    const ctx = { session, kernel: one.kernel } as Parameters<NonNullable<ReturnType<typeof one.kernel.commands.get>>['run']>[1];
    expect(String(await one.kernel.commands.get('status')!.run('', ctx))).toContain(`Stored in: Redis stream ${prefix}session:${SESSION}`);
    expect(JSON.parse(String(await one.kernel.commands.get('sessions')!.run('--json --all', ctx)))).toMatchObject([{ id: SESSION, turns: 2 }]);
    await one.close(session);
    const two = harness(1_000, { url, prefix });
    const resumed = await two.start({ resume: { id: SESSION.slice(0, 8) } });
    await runAgent(two.kernel, resumed, 'again');
    await two.close(resumed);
    expect(one.warnings().concat(two.warnings())).toEqual([]);
    const keys = (await conn.keys('*')).sort();
    expect(keys).toEqual([`${prefix}session:${SESSION}`, `${prefix}sessions`, `${prefix}sessions:project:${ws.dir}`]);
    expect((await conn.xrange(`${prefix}session:${SESSION}`, '-', '+')).at(-1)![1][1]).toContain('"turns":3');
  });

  it("under a fleet worker, the run's Redis user and prefix win over a config's redisSessions.url and .prefix", async () => {
    server = await startAnthropicServer([say('done')]);
    const prefix = 'keel-fleet:q:run:task-2:';
    await conn.call('ACL', 'SETUSER', 'task2', ...taskUserRules(prefix, 'pw'));
    const saved = { ...process.env };
    Object.assign(process.env, { KEEL_FLEET_BROKER: 'http://127.0.0.1:1/broker', KEEL_REDIS_URL: `redis://task2:pw@127.0.0.1:${redis.port}`, KEEL_REDIS_SESSION_PREFIX: prefix });
    try {
      // A config that would reach every key as the default user, under the shared prefix.
      const kernel = testKernel([queryAnthropic(), permissions(), sessionStore(), redisPlugin(), sessionStoreRedis({ lockMs: 1_000 })], {
        apiKey: API_KEY,
        baseURL: server.url,
        keelHome: ws.home,
        cwd: ws.dir,
        projectRoot: ws.dir,
        permissionMode: 'auto',
        redisSessions: { url: redis.url, prefix: 'keel:' },
      });
      const session = await testSession(kernel, { id: SESSION });
      await runAgent(kernel, session, 'hi');
      (kernel.services.get('session-store') as { close(s: Session): void }).close(session);
      await until(async () => (await conn.exists(`${prefix}session:${SESSION}`)) === 1, "the run's session in Redis");
    } finally {
      for (const key of ['KEEL_FLEET_BROKER', 'KEEL_REDIS_URL', 'KEEL_REDIS_SESSION_PREFIX']) if (saved[key] === undefined) delete process.env[key];
      Object.assign(process.env, saved);
    }
    const keys = (await conn.keys('*')).sort();
    expect(keys.every((key) => key.startsWith(prefix))).toBe(true);
    expect(keys).toContain(`${prefix}session:${SESSION}`);
  });

  it('refuses a prefix with glob characters (an ACL pattern could not confine it), naming the setting', async () => {
    server = await startAnthropicServer([say('never')]);
    const saved = process.env.KEEL_REDIS_SESSION_PREFIX;
    process.env.KEEL_REDIS_SESSION_PREFIX = 'keel:[a]';
    try {
      await expect(harness().start()).rejects.toThrow('session-store-redis: KEEL_REDIS_SESSION_PREFIX: "keel:[a]" has a space');
    } finally {
      if (saved === undefined) delete process.env.KEEL_REDIS_SESSION_PREFIX;
      else process.env.KEEL_REDIS_SESSION_PREFIX = saved;
    }
    const h = harness(1_000, { prefix: 'keel:*' });
    await expect(h.start()).rejects.toThrow('session-store-redis: prefix option: "keel:*" has a space or one of * ? [ ] \\');
  });

  it("is session-store's backend: no session file is written, and /sessions, /status and the store service answer from Redis", async () => {
    server = await startAnthropicServer([say('done')]);
    const h = harness();
    const session = await h.start();
    await runAgent(h.kernel, session, 'ping');
    const sessions = h.kernel.commands.get('sessions')!;
    expect(sessions.description).toContain('sessions in Redis');
    const ctx = { session, kernel: h.kernel } as Parameters<typeof sessions.run>[1];
    expect(JSON.parse(String(await sessions.run('--json', ctx)))).toMatchObject([{ id: SESSION, turns: 1 }]);
    expect(String(await h.kernel.commands.get('status')!.run('', ctx))).toContain(`Stored in: Redis stream keel:session:${SESSION}`);
    const store = h.kernel.services.get('session-store') as { list(root: string): Promise<Array<{ id: string }>>; fileOf(s: Session): string | undefined };
    expect((await store.list(ws.dir)).map((s) => s.id)).toEqual([SESSION]);
    expect(store.fileOf(session)).toBeUndefined();
    await h.close(session);
    expect(existsSync(join(ws.home, 'sessions'))).toBe(false);
  });

  it('needs session-store: without it the kernel refuses to seal, naming the dependency', () => {
    expect(() => testKernel([sessionStoreRedis({ url: redis.url })], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir })).toThrow(/depends on "session-store", which is not registered|needs the "session-records" service/);
  });

  it('needs the redis plugin for its connection, not fleet: without redis the kernel refuses to seal, naming it', () => {
    expect(() => testKernel([sessionStore(), sessionStoreRedis({ url: redis.url })], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir })).toThrow('plugin "session-store-redis" depends on "redis", which is not registered');
    expect(() => testKernel([sessionStore(), sessionStoreRedis({ url: redis.url }), redisPlugin()], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir })).toThrow('plugin "session-store-redis" depends on "redis", which must be registered before it');
    expect(() => testKernel([sessionStore(), redisPlugin(), sessionStoreRedis({ url: redis.url })], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir })).not.toThrow();
  });

  it('writes one stream entry per record, and a resume on another kernel rebuilds the history and its totals', async () => {
    server = await startAnthropicServer([callTool('echo', { text: 'pong' }), say('first done'), say('second done')]);
    const one = harness();
    const session = await one.start();
    await runAgent(one.kernel, session, 'ping');
    await one.close(session);
    const written = await records();
    expect(written.map((r) => r.type)).toEqual(['header', 'message', 'usage', 'message', 'message', 'usage', 'message']);
    expect(written[0]).toMatchObject({ type: 'header', id: SESSION, projectRoot: ws.dir });
    expect(written.at(-1)).toMatchObject({ type: 'message', message: { role: 'assistant' }, stats: { turns: 2 } });

    const two = harness();
    const resumed = await two.start({ resume: { id: SESSION.slice(0, 8) } });
    expect(resumed.id).toBe(SESSION);
    expect(resumed.resumedFrom).toBe(SESSION);
    expect(resumed.inherited).toMatchObject({ from: SESSION, forked: false, calls: 2 });
    await runAgent(two.kernel, resumed, 'again');
    await two.close(resumed);
    const [, , third] = server.messageRequests();
    expect(plainMessages(third.body.messages).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect((await records()).at(-1)).toMatchObject({ stats: { turns: 3 } });
    // Listed for --resume pickers.
    expect(await conn.zrange('keel:sessions', '0', '-1')).toEqual([SESSION]);
  });

  it('repairs like the file store: a call without a result is closed as interrupted (and written), a corrupt entry is skipped with a warning', async () => {
    server = await startAnthropicServer([say('resumed fine')]);
    const key = `keel:session:${SESSION}`;
    const add = (record: unknown) => conn.xadd(key, '*', 'r', JSON.stringify(record));
    await add({ type: 'header', version: 1, id: SESSION, cwd: ws.dir, projectRoot: ws.dir, model: 'm', preset: 'p', createdAt: new Date().toISOString() });
    await add({ type: 'message', at: 1, message: { role: 'user', content: 'go' } });
    const corrupt = await conn.xadd(key, '*', 'r', '{not json');
    await add({ type: 'message', at: 2, message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_x', name: 'echo', input: { text: 'a' } }] }, stats: { turns: 1, costUsd: 0.5 } });
    const h = harness();
    const session = await h.start({ resume: { id: SESSION } });
    expect(h.warnings()).toEqual([`${key}: entry ${corrupt} is corrupt (not valid JSON); skipped`]);
    expect(session.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: expect.stringContaining('Interrupted'), is_error: true }] });
    expect(session.inherited?.costUsd).toBe(0.5);
    // The synthesized result is in the stream now, so the stream itself is valid.
    const stream = await conn.xrange(key, '-', '+');
    expect(JSON.parse(stream.at(-1)![1][1])).toMatchObject({ type: 'message', message: { role: 'user', content: [{ tool_use_id: 'toolu_x' }] } });
    await runAgent(h.kernel, session, 'go on');
    await h.close(session);
  });

  it('one writer at a time: a live writer keeps its lock; a dead one loses it after its expiry', async () => {
    server = await startAnthropicServer([say('a'), say('b')]);
    const first = harness(800);
    const held = await first.start();
    await runAgent(first.kernel, held, 'hold');
    const second = harness(800);
    // The first writer is alive (it extends its lock): the second gives up after the lock's life, naming who holds it.
    await expect(second.start({ resume: { id: SESSION } })).rejects.toThrow(new RegExp(`session ${SESSION} is in use by another keel process \\(pid ${process.pid} on .+\\); wait for it to end, or add --fork-session`));
    await first.close(held);
    const resumed = await second.start({ resume: { id: SESSION } });
    await second.close(resumed);
    // A lock nobody extends (its holder was killed): taken over once it expires.
    await conn.set(`keel:session:${SESSION}:lock`, JSON.stringify({ token: 'x', pid: 1, host: 'gone' }), 'PX', 300);
    const third = harness(800);
    const again = await third.start({ resume: { id: SESSION } });
    expect(JSON.parse((await conn.get(`keel:session:${SESSION}:lock`))!).pid).toBe(process.pid);
    await third.close(again);
  });

  it('keeps the API key out of every record', async () => {
    server = await startAnthropicServer([say(`the key is ${API_KEY}`)]);
    const h = harness();
    const session = await h.start();
    await runAgent(h.kernel, session, `remember ${API_KEY} and sk-ant-other0123456789`);
    await h.close(session);
    const text = JSON.stringify(await records());
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain('sk-ant-other0123456789');
    expect(text).toContain('[REDACTED]');
  });

  it('an unknown id or an ambiguous prefix stops with one line', async () => {
    server = await startAnthropicServer([]);
    const h = harness();
    await expect(h.start({ resume: { id: 'nope' } })).rejects.toThrow('no session matches "nope" in Redis (keel sessions lists them)');
    for (const id of ['abc-1', 'abc-2']) {
      await conn.xadd(`keel:session:${id}`, '*', 'r', JSON.stringify({ type: 'header', version: 1, id }));
      await conn.zadd('keel:sessions', Date.now(), id);
    }
    await expect(h.start({ resume: { id: 'abc' } })).rejects.toThrow('"abc" matches 2 sessions (abc-1, abc-2…); give more of the id');
    // A new session under an id that is taken (--session-id) would mix two conversations in one stream.
    await expect(h.start({ id: 'abc-1' })).rejects.toThrow('session id abc-1 is already in use: resume it with --resume abc-1, or leave out --session-id for a new one');
    expect(await conn.xlen('keel:session:abc-1')).toBe(1);
  });
});
