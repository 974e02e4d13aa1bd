/**
 * The type-ahead guard of every dialog that asks for a decision (permission, plan, trust, the model's choices): keys
 * typed for the prompt never answer it. A key answers only once the keyboard has been quiet for `QUIET_MS` since the
 * later of the dialog's appearance and the key before it (typed anywhere in the UI); until then every key but Esc
 * (a safe answer: deny, keep planning, don't trust, leave unanswered) and the arrows (which only move the selection)
 * is dropped. A dialog that dropped a key was being typed through, so it then asks for a longer quiet, `SETTLED_MS`:
 * the user has to notice it and read it first. The first key after the quiet arms the dialog: from then on every key
 * acts at once, so choosing with arrows then Enter is not slowed down.
 */
import type { Key } from 'ink';

/** Quiet before the first answer: shorter than anyone takes to read a dialog, longer than the gaps of typing. */
export const QUIET_MS = 400;
/** Quiet before the first answer once keys typed through the dialog's appearance were dropped. */
export const SETTLED_MS = 1000;

/** When a key arrived, and when the one before it did (by the UI's clock, in ms). */
export interface KeyTiming {
  at: number;
  previous: number;
}

export type KeyClass = 'safe' | 'move' | 'answer';

/** Esc and Ctrl+C are safe answers; arrows and Tab only move a selection; every other key (and a paste) may answer. */
export function classify(input: string, key: Key | null): KeyClass {
  if (!key) return 'answer';
  if ((key.escape && input === '') || (key.ctrl && input === 'c')) return 'safe';
  if (key.upArrow || key.downArrow || key.leftArrow || key.rightArrow || key.tab) return 'move';
  return 'answer';
}

export class TypeaheadGuard {
  private armed = false;
  /** Keys dropped so far: the dialog shows a hint once there is one. */
  dropped = 0;

  constructor(private readonly shownAt: number) {}

  /** Whether a key of class `kind` that arrived at `timing` may act on the dialog. */
  admit(kind: KeyClass, timing: KeyTiming): boolean {
    if (this.armed) return true;
    const quiet = timing.at - Math.max(this.shownAt, timing.previous);
    if (quiet >= (this.dropped > 0 ? SETTLED_MS : QUIET_MS)) {
      this.armed = true;
      return true;
    }
    if (kind !== 'answer') return true;
    this.dropped++;
    return false;
  }
}
