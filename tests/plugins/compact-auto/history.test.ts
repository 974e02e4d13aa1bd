/** Where AutoCompact cuts: never the user's latest request, never a tool pair, never an unanswered tool_use. */
import { describe, expect, it } from 'vitest';
import type { MessageParam } from '../../../kernel/index.js';
import { splitHistory, summaryHead } from '../../../plugins/compact-auto/history.js';
import { assertPairsIntact, randomHistory, textOfMessage } from './harness.js';

/** What AutoCompact writes back: the summary head (with the latest request when it was cut), then the tail. */
function compactOnce(messages: readonly MessageParam[], keepTurns: number, fits: (tail: MessageParam[]) => boolean, round: number): MessageParam[] | null {
  const split = splitHistory(messages, keepTurns, fits);
  if (!split) return null;
  return [{ role: 'user', content: summaryHead(`summary ${round}`, split.latestRequest, 'intro') }, ...split.tail];
}

const lastRequestOf = (messages: readonly MessageParam[]) => [...messages].reverse().find((m) => typeof m.content === 'string')!.content as string;

describe('splitHistory', () => {
  it('keeps the latest request and every tool pair over many histories, also when compacted again', () => {
    const fitters: Array<(tail: MessageParam[]) => boolean> = [() => true, (tail) => tail.length < 4, () => false];
    let folded = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const messages = randomHistory(seed, 3 + (seed % 20));
      const latest = lastRequestOf(messages);
      for (const keepTurns of [0, 1, 2, 6]) {
        for (const fits of fitters) {
          let current: MessageParam[] = messages;
          // Three rounds: later ones find the request folded into an earlier summary head.
          for (let round = 1; round <= 3; round++) {
            const next = compactOnce(current, keepTurns, fits, round);
            if (!next) break;
            assertPairsIntact(next);
            expect(next[0]!.role).toBe('user');
            expect(next[1]?.role ?? 'assistant').toBe('assistant');
            const text = next.map(textOfMessage).join('\n');
            expect(text, `seed ${seed}, keep ${keepTurns}, round ${round}`).toContain(latest);
            if (!next.slice(1).some((m) => typeof m.content === 'string')) folded++;
            expect(text.match(/<summary>/g)).toHaveLength(1);
            current = next;
          }
        }
      }
    }
    // The interesting case happened: the request survived only inside a summary head.
    expect(folded).toBeGreaterThan(100);
  });

  it('keeps an unanswered tool_use at the end as the last message', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const messages = randomHistory(seed, 4 + (seed % 10));
      if (messages[messages.length - 1]!.role === 'assistant') messages.push({ role: 'user', content: 'one more thing' });
      const open: MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: `open_${seed}`, name: 'x', input: {} }] };
      messages.push(open);
      const next = compactOnce(messages, 0, () => false, 1);
      expect(next).not.toBeNull();
      expect(next![next!.length - 1]).toBe(open);
      expect(next!.map(textOfMessage).join('\n')).toContain(lastRequestOf(messages));
    }
  });

  it('has nothing to summarise in a history of one request and one answer', () => {
    expect(splitHistory([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }], 2, () => true)).toBeNull();
  });
});
