/** The retry loop every provider shares: backoff, 429 waits, first-byte and idle watchdogs, visible retries. */
import { KeelError, type AgentEvent } from '../../kernel/index.js';
import { classify, type Verdict } from './classify.js';
import { abortError, arm, type Clock, type Timer } from './clock.js';
import { watchedFetch, type Fetch } from './watch.js';

export interface RetrySettings {
  /** Retries per call, shared by every cause. */
  maxRetries: number;
  /** The first backoff wait; each retry doubles it (1 s → 2 s → 4 s). */
  baseDelayMs: number;
  /** The longest 429 `retry-after` Keel waits; a longer one fails at once. */
  maxRetryAfterMs: number;
  /** Per attempt: the response headers must arrive within this time. */
  firstByteTimeoutMs: number;
  /** Per attempt: after the headers, no byte for this long aborts and retries. */
  idleTimeoutMs: number;
  /**
   * Per attempt: no content event for this long (keep-alive pings do not count) aborts the attempt, and the
   * call fails without a retry: the server is alive but not answering.
   */
  progressTimeoutMs: number;
}

export const DEFAULT_RETRY: RetrySettings = {
  maxRetries: 3,
  baseDelayMs: 1000,
  maxRetryAfterMs: 60_000,
  // Worst case for an endpoint that never answers: 4 attempts × 30 s + 1 + 2 + 4 s of backoff ≈ 2 min.
  firstByteTimeoutMs: 30_000,
  idleTimeoutMs: 60_000,
  progressTimeoutMs: 120_000,
};

/** What one attempt gets from the policy. */
export interface RetryAttempt {
  /** 1 for the first try. */
  number: number;
  /** Aborted by the user's signal or by a watchdog; pass it to the HTTP client. */
  signal: AbortSignal;
  /** Call on the response headers and on every stream event: it feeds the watchdogs. */
  alive(): void;
  /** Call on every event that carries content (not keep-alive pings): it feeds the progress deadline. */
  progress(): void;
  /**
   * A fetch to give the HTTP client for this attempt: it calls `alive()` on the headers and on every chunk of
   * the body, so keep-alive pings an SDK drops still count as life.
   */
  fetch: Fetch;
  /** The same watching around another fetch (a provider's own, such as the `network` service's proxy fetch). */
  watch?(inner: Fetch): Fetch;
}

export interface RetryRunOptions {
  /** The user's abort: stops the attempt and any wait at once. */
  signal?: AbortSignal;
  /** Where `retry` events go (the turn's `emit`). */
  emit?(event: AgentEvent): void;
  /** Names the provider in error messages ("Anthropic API"). */
  label?: string;
  /** The endpoint tried, named in connection errors so a wrong `baseURL` shows ("… ECONNREFUSED (http://…)"). */
  url?: string;
}

/**
 * The `retry` service. An attempt that throws is retried when the failure is transient: a status in
 * 408/409/429/500/502/503/504/529, a connection error, a watchdog timeout, or an error the provider marks
 * `retryable: true` (a stream that broke after its headers). Anything else is rethrown as is.
 */
export interface RetryService {
  readonly settings: RetrySettings;
  run<T>(attempt: (ctx: RetryAttempt) => Promise<T>, opts?: RetryRunOptions): Promise<T>;
}

export function createRetryService(settings: RetrySettings, clock: Clock): RetryService {
  return {
    settings,
    async run(fn, opts = {}) {
      const label = opts.label ?? 'the model API';
      const started = clock.now();
      let retries = 0;
      for (let number = 1; ; number++) {
        if (opts.signal?.aborted) throw abortError(opts.signal);
        const watch = watchdog(settings, clock, opts.signal);
        let verdict: Verdict;
        let failure: unknown;
        let timeout: Timeout | undefined;
        try {
          return await fn({ number, signal: watch.signal, alive: watch.alive, progress: watch.progress, fetch: watchedFetch(watch.alive), watch: (inner) => watchedFetch(watch.alive, inner) });
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          timeout = watch.timedOut();
          // A watchdog's abort is not the user's: the failure carries a timeout, never the abort, as its cause.
          failure = timeout ? timeoutError(label, timeout.why, number, clock.now() - started) : err;
          verdict = timeout ? (timeout.final ? { retry: false } : { retry: true, cause: timeout.why }) : classify(err, clock.now());
          if (verdict.retry && verdict.connection && opts.url) verdict = { ...verdict, cause: `${verdict.cause} (${opts.url})` };
        } finally {
          watch.dispose();
        }
        if (!verdict.retry) throw failure;
        if (verdict.waitMs !== undefined && verdict.waitMs > settings.maxRetryAfterMs) {
          throw new KeelError(
            `${label}: ${verdict.cause}; the server asks to wait ${seconds(verdict.waitMs)}, longer than the ${seconds(settings.maxRetryAfterMs)} Keel waits. Try again later.`,
            { code: 'rate_limited', cause: failure },
          );
        }
        if (retries >= settings.maxRetries) {
          if (timeout) throw failure;
          throw new KeelError(`${label}: ${verdict.cause} (gave up after ${settings.maxRetries} ${settings.maxRetries === 1 ? 'retry' : 'retries'})`, {
            code: 'retries_exhausted',
            cause: failure,
          });
        }
        const delayMs = verdict.waitMs ?? settings.baseDelayMs * 2 ** retries;
        retries++;
        opts.emit?.({ type: 'retry', attempt: retries, maxRetries: settings.maxRetries, delayMs, cause: verdict.cause });
        await clock.sleep(delayMs, opts.signal);
      }
    },
  };
}

/** Why a watchdog aborted an attempt; `final` when a retry would not help. */
interface Timeout {
  why: string;
  final: boolean;
}

interface Watchdog {
  signal: AbortSignal;
  alive(): void;
  progress(): void;
  /** Why the watchdog aborted the attempt, if it did. */
  timedOut(): Timeout | undefined;
  dispose(): void;
}

/**
 * One attempt's abort controller: the user's signal, a first-byte timer, then an idle timer re-armed on every
 * byte, and a progress deadline re-armed only on content (a stream of pings alone runs it out).
 */
function watchdog(settings: RetrySettings, clock: Clock, user: AbortSignal | undefined): Watchdog {
  const controller = new AbortController();
  let reason: Timeout | undefined;
  const fire = (why: string, final = false) => () => {
    if (reason) return;
    reason = { why, final };
    controller.abort(new Error(why));
  };
  const onUserAbort = () => controller.abort(user?.reason);
  user?.addEventListener('abort', onUserAbort, { once: true });
  const firstByte = arm(clock, settings.firstByteTimeoutMs, fire(`no response within ${seconds(settings.firstByteTimeoutMs)}`));
  const noProgress = fire(`no content for ${seconds(settings.progressTimeoutMs)} (the server sent only keep-alives)`, true);
  const stalled = fire(`the stream stalled (no event for ${seconds(settings.idleTimeoutMs)})`);
  // Both armed on the headers (until then the first-byte timer is the one that counts), then restarted, not remade.
  let idle: Timer | undefined;
  let noContent: Timer | undefined;
  return {
    signal: controller.signal,
    alive() {
      if (reason) return;
      noContent ??= arm(clock, settings.progressTimeoutMs, noProgress);
      if (idle) idle.restart();
      else {
        firstByte.cancel();
        idle = arm(clock, settings.idleTimeoutMs, stalled);
      }
    },
    progress() {
      if (reason) return;
      if (noContent) noContent.restart();
      else noContent = arm(clock, settings.progressTimeoutMs, noProgress);
    },
    timedOut: () => reason,
    dispose() {
      firstByte.cancel();
      idle?.cancel();
      noContent?.cancel();
      user?.removeEventListener('abort', onUserAbort);
    },
  };
}

/** "Anthropic API timed out: no response within 30 s (4 attempts over 2 min 7 s)". */
function timeoutError(label: string, why: string, attempts: number, elapsedMs: number): KeelError {
  const tries = `${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}`;
  const timeout = Object.assign(new Error(why), { name: 'TimeoutError', code: 'timeout' });
  return new KeelError(`${label} timed out: ${why} (${tries} over ${duration(elapsedMs)})`, { code: 'timeout', cause: timeout });
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function duration(ms: number): string {
  const total = Math.round(ms / 1000);
  const minutes = Math.floor(total / 60);
  return minutes ? `${minutes} min ${total % 60} s` : `${total} s`;
}
