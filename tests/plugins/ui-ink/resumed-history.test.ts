import { describe, expect, it } from 'vitest';
import type { MessageParam } from '../../../kernel/index.js';
import { RESUMED_HISTORY_ROWS } from '../../../plugins/session-store/resumed-history.js';
import { transcript } from '../../../plugins/session-store/user-items.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import { Transcript, type StaticItem } from '../../../plugins/ui-ink/transcript.js';
import { until } from '../../helpers/until.js';

describe('a long resumed session in the Ink UI', () => {
  it('the transcript prints the note and the end of a long resumed session', async () => {
    const t = new Transcript({ paint: makePaint(false), glyphs: glyphsFor({ LANG: 'C.UTF-8' }), width: () => 80, frameMs: 1 });
    const printed: StaticItem[] = [];
    t.subscribe(() => printed.push(...t.frame.staticItems));
    const messages: MessageParam[] = [];
    for (let n = 0; n < 2_500; n++) messages.push({ role: 'user', content: `prompt ${n}` }, { role: 'assistant', content: [{ type: 'text', text: `answer ${n}` }] });
    t.printHistory(messages, transcript);
    await until(() => printed.some((i) => i.text === 'answer 2499'), 'the end of the history to be printed');
    const texts = printed.map((i) => i.text);
    expect(texts[0]).toMatch(/^… 4,\d{3} earlier messages not shown here/);
    expect(texts.at(-1)).toBe('answer 2499');
    expect(texts.at(-2)).toBe('> prompt 2499');
    expect(texts.length - 1).toBe(RESUMED_HISTORY_ROWS);
  });
});
