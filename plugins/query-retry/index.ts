import { z } from 'zod';
import { definePlugin, KeelError } from '../../kernel/index.js';
import { systemClock, type Clock } from './clock.js';
import { createRetryService, DEFAULT_RETRY, type RetryService, type RetrySettings } from './policy.js';

export type { Clock, Timer } from './clock.js';
export type { RetryAttempt, RetryRunOptions, RetryService, RetrySettings } from './policy.js';
export { DEFAULT_RETRY } from './policy.js';
export type { Fetch } from './watch.js';

declare module '../../kernel/types.js' {
  interface Services {
    /** The retry policy every provider plugin runs its model calls through. */
    retry: RetryService;
  }
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Retry policy tuning; see docs/query.md. */
    retry?: Partial<RetrySettings>;
  }
}

export interface QueryRetryOptions extends Partial<RetrySettings> {
  /** Time source for waits and watchdogs; tests inject a fake one. */
  clock?: Clock;
}

const ms = z.number().int().nonnegative();
const retryConfig = z
  .object({
    maxRetries: z.number().int().min(0).max(10),
    baseDelayMs: ms,
    maxRetryAfterMs: ms,
    firstByteTimeoutMs: z.number().int().positive(),
    idleTimeoutMs: z.number().int().positive(),
    progressTimeoutMs: z.number().int().positive(),
  })
  .partial()
  .strict();

/**
 * Offers the `retry` service: one policy for every provider (backoff, 429 waits, watchdogs, `retry` events).
 * Settings: defaults ← plugin options ← config `retry`.
 */
export default definePlugin((opts: QueryRetryOptions = {}) => ({
  name: 'query-retry',
  kernel: '^1.0.0',
  config: { retry: retryConfig },
  apply(kernel) {
    const { clock, ...fromOptions } = opts;
    const parsed = retryConfig.safeParse(kernel.config.retry ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new KeelError(`config retry${issue.path.length ? `.${issue.path.map(String).join('.')}` : ''}: ${issue.message}`, { code: 'config', exitCode: 2 });
    }
    const fromConfig = parsed.data;
    const settings: RetrySettings = { ...DEFAULT_RETRY, ...fromOptions, ...fromConfig };
    kernel.services.provide('retry', createRetryService(settings, clock ?? systemClock));
  },
}));
