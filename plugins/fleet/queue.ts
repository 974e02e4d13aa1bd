/** The BullMQ queue of a fleet, over one connection that fails fast when Redis is not there. */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { connect } from './connection.js';
import type { FleetSettings } from './settings.js';
import type { Task, TaskResult } from './tasks.js';

export type TaskData = { task: Task; submittedAt: number; started?: boolean };
export type FleetQueue = Queue<TaskData, TaskResult>;

export async function openQueue(settings: FleetSettings): Promise<{ queue: FleetQueue; redis: Redis; close(): Promise<void> }> {
  const redis = await connect(settings.redisUrl, { what: 'fleet' });
  const queue: FleetQueue = new Queue(settings.queue, { connection: redis });
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
