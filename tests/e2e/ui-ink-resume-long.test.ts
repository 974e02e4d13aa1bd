/**
 * Resuming a long session in the Ink UI draws only the conversation's end, says how much it leaves out, and the
 * prompt answers at once; the model still gets every message.
 */
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';
import { writeSession } from '../helpers/ui-fixtures.js';

const fixture = terminalFixture();

describe.skipIf(!hasTmux)('resuming a long session in the Ink UI', () => {
  it('draws the last rows under a line counting the earlier messages, and the model gets them all', async () => {
    const { server, term } = await fixture.start([say('the next answer')], { prepare: (ws) => writeSession(ws.home, ws.dir, 'long-one', 1000), width: 120, args: ['--resume', 'long-one'], ready: false });
    await term.waitFor(/Resumed session long-one \(4000 messages\)/, { timeoutMs: 60_000 });
    // The end of the conversation drawn (it may come after that line).
    await term.waitFor('answer number 999', { history: true });
    const history = term.joinedHistory();
    const note = /… ([\d,]+) earlier messages not shown here \(the model still has the whole conversation\)/.exec(history);
    expect(note).not.toBeNull();
    // The end is drawn, the start is not; what is drawn follows the note.
    expect(history).toContain('answer number 999');
    expect(history).not.toMatch(/^> request number 0$/m);
    const hidden = Number(note![1]!.replace(/,/g, ''));
    expect(hidden).toBeGreaterThan(3000);
    expect(history).not.toContain(`answer number ${Math.floor(hidden / 4) - 1}\n`);
    expect(history.indexOf(note![0])).toBeLessThan(history.indexOf('answer number 999'));
    term.type('go on');
    term.keys('Enter');
    await term.waitFor(/the next answer/);
    expect(server.messageRequests()[0]!.body.messages).toHaveLength(4001);
  });
});
