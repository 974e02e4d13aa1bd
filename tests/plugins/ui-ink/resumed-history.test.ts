import { describe, expect, it } from 'vitest';
import { hiddenNote, historyTail, RESUMED_HISTORY_ROWS } from '../../../plugins/ui-ink/resumed-history.js';
import { Transcript, type StaticItem } from '../../../plugins/ui-ink/transcript.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import type { MessageParam } from '../../../kernel/index.js';
import { userItems } from '../../../plugins/session-store/user-items.js';
import { until } from '../../helpers/until.js';

const lines = (n: number) => (m: number) => Array.from({ length: n }, (_, i) => `m${m} line${i}`);

describe('the end of a resumed conversation that is drawn', () => {
  it('draws everything, with no note, when the conversation fits', () => {
    const tail = historyTail([1, 2, 3], lines(2), 80, 10);
    expect(tail.groups).toEqual([lines(2)(1), lines(2)(2), lines(2)(3)]);
    expect(hiddenNote(tail)).toBeNull();
  });

  it('draws only the last messages that fit the row budget, and renders none of the earlier ones', () => {
    const rendered: number[] = [];
    const messages = Array.from({ length: 10_000 }, (_, i) => i);
    const tail = historyTail(messages, (m) => (rendered.push(m), lines(3)(m)), 80, 9);
    expect(tail.groups).toEqual([lines(3)(9997), lines(3)(9998), lines(3)(9999)]);
    expect(tail.hiddenMessages).toBe(9997);
    expect(rendered).toEqual([9999, 9998, 9997]);
    expect(hiddenNote(tail)).toBe('… 9,997 earlier messages not shown here (the model still has the whole conversation)');
  });

  it('cuts the message that crosses the budget to its last lines and says so', () => {
    const tail = historyTail([1, 2, 3], lines(4), 80, 10);
    expect(tail.groups).toEqual([['m1 line2', 'm1 line3'], lines(4)(2), lines(4)(3)]);
    expect(tail).toMatchObject({ hiddenMessages: 0, cut: true });
    expect(hiddenNote(tail)).toBe('… the start of the first message shown not shown here (the model still has the whole conversation)');
    const two = historyTail([0, 1, 2, 3], lines(4), 80, 10);
    expect(two).toMatchObject({ hiddenMessages: 1, cut: true });
    expect(hiddenNote(two)).toMatch(/^… 1 earlier message and the start of the next not shown/);
  });

  it('counts wrapped and multi-line items as the rows they take', () => {
    // One item of 3 lines, one line of 250 characters at 100 columns (3 rows): 6 rows, over a budget of 5.
    const tail = historyTail([1, 2], (m) => (m === 1 ? ['a\nb\nc'] : ['x'.repeat(250)]), 100, 5);
    expect(tail.groups).toEqual([['x'.repeat(250)]]);
    expect(tail.hiddenMessages).toBe(1);
  });

  it('a single huge answer is drawn by its end only', () => {
    const tail = historyTail([1], lines(100_000), 80);
    expect(tail.groups[0]).toHaveLength(RESUMED_HISTORY_ROWS);
    expect(tail.groups[0]!.at(-1)).toBe('m1 line99999');
  });

  it('the transcript prints the note and the end of a long resumed session', async () => {
    const t = new Transcript({ paint: makePaint(false), glyphs: glyphsFor({ LANG: 'C.UTF-8' }), width: () => 80, frameMs: 1 });
    const printed: StaticItem[] = [];
    t.subscribe(() => printed.push(...t.frame.staticItems));
    const messages: MessageParam[] = [];
    for (let n = 0; n < 2_500; n++) messages.push({ role: 'user', content: `prompt ${n}` }, { role: 'assistant', content: [{ type: 'text', text: `answer ${n}` }] });
    t.printHistory(messages, userItems);
    await until(() => printed.some((i) => i.text === 'answer 2499'), 'the end of the history to be printed');
    const texts = printed.map((i) => i.text);
    expect(texts[0]).toMatch(/^… 4,\d{3} earlier messages not shown here/);
    expect(texts.at(-1)).toBe('answer 2499');
    expect(texts.at(-2)).toBe('> prompt 2499');
    expect(texts.length - 1).toBe(RESUMED_HISTORY_ROWS);
  });
});
