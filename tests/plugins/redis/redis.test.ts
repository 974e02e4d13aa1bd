/** The `redis` plugin against a real redis-server: the shared URL, fail-fast connections, riding out a restart, doctor. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KeelError } from '../../../kernel/index.js';
import redisPlugin from '../../../plugins/redis/index.js';
import { freePort, startRedis, type TestRedis } from '../../helpers/redis.js';
import { testKernel } from '../../helpers/kernel.js';

let redis: TestRedis;
const saved = process.env.KEEL_REDIS_URL;

beforeEach(async () => {
  redis = await startRedis();
  delete process.env.KEEL_REDIS_URL;
});
afterEach(async () => {
  if (saved === undefined) delete process.env.KEEL_REDIS_URL;
  else process.env.KEEL_REDIS_URL = saved;
  await redis.cleanup();
});

const kernelWith = (config: Record<string, unknown> = {}) => testKernel([redisPlugin()], config);
const serviceOf = (config: Record<string, unknown> = {}) => kernelWith(config).services.require('redis', 'test');
const doctor = async (config: Record<string, unknown> = {}) =>
  (kernelWith(config).services.get('doctor:redis') as { checks(): Promise<Array<{ name: string; ok: boolean; detail: string }>> }).checks();

describe('redis', () => {
  it('offers one URL to fleet and session-store-redis: KEEL_REDIS_URL, else redis.url, else none', () => {
    expect(serviceOf().url()).toBeUndefined();
    expect(serviceOf({ redis: { url: 'redis://config:6379' } }).url()).toBe('redis://config:6379');
    // The environment wins over the config file: a fleet worker's run gets its task's own user this way.
    expect(serviceOf({ redis: { url: 'redis://config:6379' } }).url({ KEEL_REDIS_URL: 'redis://env:6379' })).toBe('redis://env:6379');
    process.env.KEEL_REDIS_URL = 'redis://process:6379';
    expect(serviceOf({ redis: { url: 'redis://config:6379' } }).url()).toBe('redis://process:6379');
  });

  it('connects, and a Redis that is not there is one line naming who connects and the URL, its password hidden', async () => {
    const client = await serviceOf().connect(redis.url, { what: 'test' });
    try {
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
    const url = `redis://:hunter2@127.0.0.1:${await freePort()}`;
    const error = await serviceOf().connect(url, { what: 'fleet' }).then(() => undefined, (err: KeelError) => err);
    expect(error?.message).toMatch(new RegExp(`^fleet: cannot reach Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:\\d+: .*ECONNREFUSED`));
    expect(error?.message).not.toContain('hunter2');
    expect(error?.exitCode).toBe(2);
  });

  it('rides out a restart of Redis: a command sent while it is down is answered once it is back', async () => {
    const client = await serviceOf().connect(redis.url, { what: 'test' });
    try {
      await client.set('k', 'v');
      await redis.stop();
      const answer = client.get('k');
      await redis.start();
      expect(await answer).toBe('v');
    } finally {
      client.disconnect();
    }
  });

  it('gives up after redis.reconnectForMs without Redis, with the same one line', async () => {
    let gaveUp!: (err: KeelError) => void;
    const given = new Promise<KeelError>((resolve) => (gaveUp = resolve));
    const client = await serviceOf({ redis: { reconnectForMs: 300 } }).connect(redis.url, { what: 'worker', onGiveUp: gaveUp });
    try {
      await redis.stop();
      const error = await given;
      expect(error.message).toMatch(/^worker: cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: no connection for 0\.3 s$/);
    } finally {
      client.disconnect();
    }
  });

  it('keel doctor: says whether a URL is set and whether Redis answers there', async () => {
    expect(await doctor()).toEqual([{ name: 'redis', ok: true, detail: expect.stringContaining('no Redis URL (redis.url or KEEL_REDIS_URL)') }]);
    expect(await doctor({ redis: { url: redis.url } })).toEqual([{ name: 'redis', ok: true, detail: `Redis answers at ${redis.url}` }]);
    await redis.stop();
    const [down] = await doctor({ redis: { url: redis.url } });
    expect(down).toMatchObject({ name: 'redis', ok: false, detail: expect.stringMatching(/^redis: cannot reach Redis at .*ECONNREFUSED/) });
  });
});
