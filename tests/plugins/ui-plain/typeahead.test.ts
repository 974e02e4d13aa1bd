/** The plain UI's questions take no line typed ahead for the prompt (plugins/ui-plain/typeahead.ts), by key times. */
import { describe, expect, it } from 'vitest';
import { LineGuard, QUIET_MS, SETTLED_MS } from '../../../plugins/ui-plain/typeahead.js';

describe('the line guard of a question', () => {
  it('takes a line begun after a quiet period since the question appeared', () => {
    const guard = new LineGuard(1000);
    guard.key({ at: 1000 + QUIET_MS, previous: 0 });
    guard.key({ at: 1000 + QUIET_MS + 50, previous: 1000 + QUIET_MS });
    expect(guard.line()).toBe(true);
  });

  it('refuses a line whose first key went on from typing, or came the instant the question appeared, then asks for a longer quiet', () => {
    const guard = new LineGuard(1000);
    // "y" then Enter, typed on from the prompt's words: the first key follows the one before by a typist's gap.
    guard.key({ at: 1000 + QUIET_MS + 100, previous: 1000 + QUIET_MS });
    guard.key({ at: 1000 + QUIET_MS + 200, previous: 1000 + QUIET_MS + 100 });
    expect(guard.line()).toBe(false);
    // Enter alone, pressed as the question appeared by someone who had not typed for long.
    const fresh = new LineGuard(5000);
    fresh.key({ at: 5050, previous: 0 });
    expect(fresh.line()).toBe(false);
    // Once a line was refused, the short quiet is not enough; a settled one is.
    guard.key({ at: 3000 + QUIET_MS, previous: 3000 });
    expect(guard.line()).toBe(false);
    guard.key({ at: 6000 + SETTLED_MS, previous: 6000 });
    expect(guard.line()).toBe(true);
  });

  it('refuses a line with no key timed (never a line it cannot vouch for)', () => {
    expect(new LineGuard(0).line()).toBe(false);
  });
});
