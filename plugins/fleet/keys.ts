/** Fleet state beside BullMQ's own keys, under `keel-fleet:<queue>:`. */
export const fleetKeys = (queue: string) => {
  const base = `keel-fleet:${queue}:`;
  return {
    /** USD spent by every run of the fleet so far (INCRBYFLOAT). */
    spent: `${base}spent`,
    /** Set when the budget stopped the fleet: why. */
    budgetStop: `${base}budget-stop`,
    /** A task's work in progress as a patch (taken after each turn's tools), for the worker that takes it over. */
    wip: (id: string) => `${base}wip:${id}`,
    /** Tasks cancelled (a worker that missed the message still sees it before it starts one). */
    cancelled: `${base}cancelled`,
    /** Pub/sub: a task id to abort, or `*` for all. */
    cancelChannel: `${base}cancel`,
    /** The queue whose BullMQ rate limiter paces model requests. */
    requestQueue: `${queue}-requests`,
    /**
     * The key prefix of a task's run (session-store-redis's KEEL_REDIS_SESSION_PREFIX): its sessions, sub-agents'
     * included, and their locks and listings, all under it, and the task's Redis user reaches nothing else.
     */
    runPrefix: (sessionId: string) => `${base}run:${sessionId}:`,
    /** The task's session stream under that prefix (session-store-redis's documented `<prefix>session:<id>`). */
    runStream: (sessionId: string) => `${base}run:${sessionId}:session:${sessionId}`,
  };
};

/** The Redis ACL user a task's run connects as (a session id is a UUID, so the name is safe in a URL). */
export const taskUserName = (sessionId: string): string => `keel-run-${sessionId}`;

export interface TaskProgress {
  turns: number;
  costUsd: number;
  lastTool?: string;
  worker: string;
  sessionId: string;
  resumed: boolean;
  /** Why the run started afresh although the task had run before (its last run recorded no model turn). */
  restarted?: string;
}

export interface TaskResult {
  id: string;
  conclusion: string;
  isError: boolean;
  costUsd: number;
  turns: number;
  result: string;
  sessionId: string;
  worker: string;
  durationMs: number;
  /** The final diff of the checkout against where it started (git's binary patch format). */
  patch: string;
  structured?: unknown;
  error?: string;
}
