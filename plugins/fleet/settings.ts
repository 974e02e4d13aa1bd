/** The `fleet` config key and how a worker or a command reads it (config, then environment, then defaults). */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';

export const fleetConfigSchema = z
  .object({
    /** The fleet's Redis, e.g. redis://127.0.0.1:6379 (else the `redis` plugin's: KEEL_REDIS_URL, else redis.url). */
    redisUrl: z.string().min(1),
    /**
     * Where a task's run reaches Redis for its session (default: redisUrl). With taskUsers (the default), its user and
     * password are replaced by the task's own; without, runs connect as this URL's user.
     */
    runRedisUrl: z.string().min(1),
    /**
     * Each task's run connects as a Redis ACL user of its own that reaches only that task's keys (default true). The
     * worker's Redis user must be allowed ACL SETUSER and DELUSER. Off (a Redis without ACL commands): every run
     * connects as runRedisUrl's user, and a run can then reach what that user can.
     */
    taskUsers: z.boolean(),
    /** The BullMQ queue's name: fleets sharing one Redis keep apart by it. */
    queue: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, - and _ only'),
    /** Model requests per minute, all workers on all machines together. */
    requestsPerMinute: z.number().positive(),
    /** USD the whole fleet may spend; once reached, no worker takes another task. */
    budgetUsd: z.number().positive(),
    /** Tasks a worker runs at once (`keel fleet work --concurrency N` overrides). */
    concurrency: z.number().int().positive(),
    /** Where checkouts are made (default <tmpdir>/keel-fleet/<queue>; never inside KEEL_HOME, whose files a run may not write). */
    workDir: z.string().min(1),
    /** BullMQ's job lock: a worker that stops extending it (kill -9) loses its task after this long. */
    lockDurationMs: z.number().int().min(200),
    /** How often workers look for tasks whose lock expired. */
    stalledIntervalMs: z.number().int().min(100),
    /** How often a task may be taken over from a dead worker before it fails. */
    maxStalledCount: z.number().int().min(0),
    /** Runs of a task that end without a result (a crash, Redis gone) before it fails; each resumes the last (default 3). */
    attempts: z.number().int().min(1),
    /** On SIGTERM, how long running tasks may finish before they are handed back (default: no limit). */
    drainTimeoutMs: z.number().int().positive(),
    /** The preset a task's run uses when the task names none. */
    preset: z.string().min(1),
    /** How to start keel for a task (default: this keel executable). */
    keelCommand: z.array(z.string().min(1)).min(1),
  })
  .partial()
  .strict();

export type FleetConfig = z.infer<typeof fleetConfigSchema>;

export interface FleetSettings {
  redisUrl: string;
  runRedisUrl: string;
  taskUsers: boolean;
  queue: string;
  requestsPerMinute?: number;
  budgetUsd?: number;
  concurrency: number;
  workDir: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
  attempts: number;
  drainTimeoutMs?: number;
  preset: string;
  keelCommand: string[];
}

/** `sharedUrl`: the `redis` plugin's URL (KEEL_REDIS_URL, else redis.url), which fleet.redisUrl overrides. */
export function resolveSettings(config: FleetConfig | undefined, sharedUrl: string | undefined): FleetSettings | { error: string } {
  const redisUrl = config?.redisUrl ?? sharedUrl;
  if (!redisUrl) return { error: 'fleet: no Redis URL: set redis.url (or fleet.redisUrl) in the config, or KEEL_REDIS_URL' };
  return {
    redisUrl,
    runRedisUrl: config?.runRedisUrl ?? redisUrl,
    taskUsers: config?.taskUsers ?? true,
    queue: config?.queue ?? 'keel-fleet',
    requestsPerMinute: config?.requestsPerMinute,
    budgetUsd: config?.budgetUsd,
    concurrency: config?.concurrency ?? 1,
    workDir: path.resolve(config?.workDir ?? path.join(tmpdir(), 'keel-fleet', config?.queue ?? 'keel-fleet')),
    lockDurationMs: config?.lockDurationMs ?? 30_000,
    stalledIntervalMs: config?.stalledIntervalMs ?? 30_000,
    maxStalledCount: config?.maxStalledCount ?? 2,
    attempts: config?.attempts ?? 3,
    drainTimeoutMs: config?.drainTimeoutMs,
    preset: config?.preset ?? 'fleet-worker',
    keelCommand: config?.keelCommand ?? defaultKeelCommand(),
  };
}

/** This keel: the launcher the process was started from (bin/keel.js, which starts from the snapshot). */
function defaultKeelCommand(): string[] {
  const launcher = process.argv[1];
  return launcher ? [launcher] : [process.execPath];
}
