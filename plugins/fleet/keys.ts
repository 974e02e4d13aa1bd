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
  };
};

export interface TaskProgress {
  turns: number;
  costUsd: number;
  lastTool?: string;
  worker: string;
  sessionId: string;
  resumed: boolean;
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
