/**
 * The type-ahead guard of the plain UI's questions that ask for a decision (permission, plan, the model's choices):
 * a line typed for the prompt never answers one. The Ink UI's rule (plugins/ui-ink/app/typeahead.ts) for lines:
 * when a question appears, the line being typed is set aside (it comes back at the prompt), and a line answers only
 * if its first key came after the keyboard was quiet for `QUIET_MS` since the later of the question's appearance
 * and the key before it. A line begun sooner is dropped, the question says so and asks again, and from then on the
 * quiet needed is `SETTLED_MS`: the user was typing through it and has to read it first.
 */

export const QUIET_MS = 400;
export const SETTLED_MS = 1000;

/** When a key arrived, and when the one before it did (ms). */
export interface KeyTiming {
  at: number;
  previous: number;
}

export class LineGuard {
  private dropped = 0;
  /** Whether the line being typed may answer; null until its first key. */
  private current: boolean | null = null;

  constructor(private readonly shownAt: number) {}

  /** Every key typed while the question waits (Enter too): the first of each line decides for the line. */
  key(timing: KeyTiming): void {
    if (this.current !== null) return;
    this.current = timing.at - Math.max(this.shownAt, timing.previous) >= (this.dropped > 0 ? SETTLED_MS : QUIET_MS);
  }

  /** A line was entered: whether it may answer the question. */
  line(): boolean {
    const ok = this.current === true;
    this.current = null;
    if (!ok) this.dropped++;
    return ok;
  }
}
