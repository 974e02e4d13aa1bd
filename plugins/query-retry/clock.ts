/** Time as the retry policy sees it: injectable, so tests never sleep for real. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`; rejects with an AbortError as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fn` once after `ms`, unless cancelled or restarted first. A clock may return just a cancel function
   * (the older form): restarting such a timer cancels it and sets a new one.
   */
  timer(ms: number, fn: () => void): Timer | (() => void);
}

export interface Timer {
  cancel(): void;
  /** Re-arms the timer for its whole `ms` from now (also after it fired): re-armed on every chunk, so no new timer each time. */
  restart(): void;
}

/** The clock's timer, as a `Timer` whatever form the clock returned it in. */
export function arm(clock: Clock, ms: number, fn: () => void): Timer {
  const made = clock.timer(ms, fn);
  if (typeof made !== 'function') return made;
  let cancel = made;
  return {
    cancel: () => cancel(),
    restart: () => {
      cancel();
      const again = clock.timer(ms, fn);
      cancel = typeof again === 'function' ? again : () => again.cancel();
    },
  };
}

export function abortError(signal?: AbortSignal): Error {
  const reason = signal?.reason;
  const message = reason instanceof Error ? reason.message : 'the request was aborted';
  return Object.assign(new Error(message), { name: 'AbortError' });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const onAbort = () => {
        clearTimeout(handle);
        reject(abortError(signal));
      };
      const handle = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
  timer(ms, fn) {
    const handle = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(handle), restart: () => void handle.refresh() };
  },
};
