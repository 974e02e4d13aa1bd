/** The BullMQ queue of a fleet, over one connection that fails fast when Redis is not there. */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { CommandContext } from './cold.js';
import type { Task, TaskResult } from './tasks.js';

export type TaskData = { task: Task; submittedAt: number; started?: boolean };
export type FleetQueue = Queue<TaskData, TaskResult>;

export async function openQueue(ctx: Pick<CommandContext, 'redis' | 'settings'>): Promise<{ queue: FleetQueue; redis: Redis; close(): Promise<void> }> {
  const redis = await ctx.redis.connect(ctx.settings.redisUrl, { what: 'fleet' });
  const queue: FleetQueue = new Queue(ctx.settings.queue, { connection: redis });
  queue.on('error', () => undefined);
  return {
    queue,
    redis,
    async close() {
      await queue.close().catch(() => undefined);
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
