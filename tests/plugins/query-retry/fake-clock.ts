/** A clock for tests: sleeps are recorded and return at once (or are held), timers fire only on `advance`. */
import type { Clock } from '../../../plugins/query-retry/index.js';
import { until as pollUntil } from '../../helpers/until.js';

interface Timer {
  at: number;
  ms: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  /** Every delay the policy asked to sleep, in order. */
  readonly sleeps: number[] = [];
  private t: number;
  private timers = new Set<Timer>();
  private held: Array<() => void> = [];

  /** With `holdSleeps`, a sleep resolves only on `release()` (or rejects when its signal aborts). */
  constructor(private readonly opts: { start?: number; holdSleeps?: boolean } = {}) {
    this.t = opts.start ?? 0;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    const aborted = () => Object.assign(new Error('aborted'), { name: 'AbortError' });
    if (signal?.aborted) return Promise.reject(aborted());
    if (!this.opts.holdSleeps) {
      this.t += ms;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(aborted()), { once: true });
      this.held.push(() => {
        this.t += ms;
        resolve();
      });
    });
  }

  /** How many timers were made. */
  made = 0;

  timer(ms: number, fn: () => void): { cancel(): void; restart(): void } {
    this.made++;
    const timer: Timer = { at: this.t + ms, ms, fn };
    this.timers.add(timer);
    return {
      cancel: () => this.timers.delete(timer),
      restart: () => {
        timer.at = this.t + ms;
        this.timers.add(timer);
      },
    };
  }

  /** The durations of the timers still armed. */
  pending(): number[] {
    return [...this.timers].map((t) => t.ms);
  }

  /** When each armed timer fires, on this clock's time line. */
  deadlines(): number[] {
    return [...this.timers].map((t) => t.at);
  }

  advance(ms: number): void {
    this.t += ms;
    for (const timer of [...this.timers]) {
      if (timer.at <= this.t) {
        this.timers.delete(timer);
        timer.fn();
      }
    }
  }

  heldSleeps(): number {
    return this.held.length;
  }

  release(): void {
    for (const go of this.held.splice(0)) go();
  }
}

/** Polls (on real time, a few ms apart: the fake clock's timers never fire on their own) until `check` holds. */
export async function until(check: () => boolean, what = 'condition'): Promise<void> {
  await pollUntil(check, what, { everyMs: 5 });
}
