/** The `redis` config key: the connection that `fleet` and `session-store-redis` share (config, environment, defaults). */
import { z } from 'zod';

export const redisConfigSchema = z
  .object({
    /** Redis, e.g. redis://:password@redis.internal:6379 or rediss://… (TLS); KEEL_REDIS_URL, when set, wins. */
    url: z.string().min(1),
    /** How long one attempt to connect may take before it counts as failed (default 5000). */
    connectTimeoutMs: z.number().int().min(100),
    /** How long a connection, once made, keeps reconnecting (Redis restarting) before it gives up (default 60000). */
    reconnectForMs: z.number().int().min(0),
  })
  .partial()
  .strict();

export type RedisConfig = z.infer<typeof redisConfigSchema>;

export interface RedisSettings {
  connectTimeoutMs: number;
  reconnectForMs: number;
}

export function resolveRedisSettings(config: RedisConfig | undefined): RedisSettings {
  return { connectTimeoutMs: config?.connectTimeoutMs ?? 5_000, reconnectForMs: config?.reconnectForMs ?? 60_000 };
}

/**
 * The URL both plugins fall back to after their own key (`fleet.redisUrl`, `redisSessions.url`): KEEL_REDIS_URL, then
 * `redis.url`. The environment wins over the config file, so the URL a fleet worker gives its run (the task's own
 * Redis user) is the one the run uses, whatever the shared config says.
 */
export function sharedUrl(config: RedisConfig | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return env.KEEL_REDIS_URL || config?.url || undefined;
}
