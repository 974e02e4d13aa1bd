/**
 * Each task's run reaches Redis as a user of its own, made by its worker just before the run starts and deleted when
 * it ends: it may touch only keys under the task's prefix (its sessions, their locks and listing) with only the
 * commands session-store-redis sends, and no pub/sub channel. A prompt-injected run that reads its credentials from
 * its environment can then neither read nor write another task's session, the queue, results, budget or cancel
 * channel, nor list keys (KEYS, SCAN) or flush anything.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { KeelError } from '../../kernel/index.js';
import { fleetKeys, taskUserName } from './keys.js';
import type { FleetSettings } from './settings.js';

/**
 * What session-store-redis sends, and only that: streams (XADD, XRANGE), the listing (ZADD, ZRANGE, ZREVRANGE), the
 * writer's lock (SET NX PX, GET, and its two scripts' GET, PEXPIRE, DEL through EVAL, which Redis checks against the
 * same rules), EXISTS; INFO and SELECT for ioredis's own start (its ready check waits out a Redis loading its data).
 */
export const RUN_COMMANDS = ['xadd', 'xrange', 'exists', 'zadd', 'zrange', 'zrevrange', 'set', 'get', 'eval', 'pexpire', 'del', 'info', 'select'] as const;

export interface TaskUser {
  /** The run's KEEL_REDIS_URL: runRedisUrl with this user and password. */
  url: string;
  remove(): Promise<void>;
}

/** The ACL rules of a task's user: reset first, so nothing a former user of that name had survives. */
export function taskUserRules(prefix: string, password: string): string[] {
  return ['reset', 'on', `>${password}`, 'resetkeys', `~${prefix}*`, 'resetchannels', '-@all', ...RUN_COMMANDS.map((command) => `+${command}`)];
}

export async function createTaskUser(redis: Redis, settings: FleetSettings, sessionId: string): Promise<TaskUser> {
  const name = taskUserName(sessionId);
  const password = randomBytes(32).toString('hex');
  // A user a dead worker left behind is deleted first: that also disconnects its run, should one still be connected.
  await redis.call('ACL', 'DELUSER', name);
  await redis.call('ACL', 'SETUSER', name, ...taskUserRules(fleetKeys(settings.queue).runPrefix(sessionId), password));
  const url = new URL(settings.runRedisUrl);
  url.username = name;
  url.password = password;
  return {
    url: url.toString(),
    remove: async () => void (await redis.call('ACL', 'DELUSER', name)),
  };
}

/** At a worker's start: can its Redis user make task users? If not, one line saying what to do, before any task runs. */
export async function checkTaskUsers(redis: Redis, settings: FleetSettings, me: string, redact: (url: string) => string): Promise<void> {
  const probe = `keel-run-probe-${me.replace(/[^\w.-]/g, '-')}`;
  try {
    await redis.call('ACL', 'SETUSER', probe, 'reset');
    await redis.call('ACL', 'DELUSER', probe);
  } catch (err) {
    const why = (err as Error).message.split('\n')[0];
    throw new KeelError(
      `fleet work: cannot create a Redis user for each task at ${redact(settings.redisUrl)} (ACL SETUSER: ${why}); give the worker's Redis user the acl command, or set fleet.taskUsers to false (every run then shares fleet.runRedisUrl's user)`,
      { exitCode: 2 },
    );
  }
}
