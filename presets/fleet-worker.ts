import { definePreset } from '../kernel/index.js';
import sessionStoreRedis from '../plugins/session-store-redis/index.js';

/**
 * What a fleet worker's runs use: the default agent with session-store's backend on Redis Streams (the plugin
 * session-store-redis, over the default preset's `redis` plugin) instead of files, so a task
 * a dead worker started resumes on any other (`keel fleet work` runs its tasks with this preset unless a task names
 * another).
 */
export default definePreset({
  name: 'fleet-worker',
  description: 'the default agent with sessions on Redis (session-store-redis), for keel fleet workers',
  extends: 'default',
  plugins: [sessionStoreRedis()],
});
