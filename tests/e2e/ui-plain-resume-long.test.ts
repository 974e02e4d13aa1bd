/**
 * Resuming a long session in the plain UI prints only the conversation's end, as the Ink UI draws it (the session
 * store's `transcript` service bounds both), under a line counting the earlier messages; the model still gets every
 * message.
 */
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux, send } from '../helpers/tmux.js';
import { writeSession } from '../helpers/ui-fixtures.js';

const fixture = terminalFixture();
const NOTE = /… ([\d,]+) earlier messages not shown here \(the model still has the whole conversation\)/;

describe.skipIf(!hasTmux)('resuming a long session in the plain UI', () => {
  it('a 10,000-message session prints its last rows under a line counting the earlier messages, and the model gets them all', async () => {
    const { server, term } = await fixture.start([say('the next answer')], {
      prepare: (ws) => writeSession(ws.home, ws.dir, 'long-one', 2500),
      width: 120,
      args: ['--ui', 'plain', '--resume', 'long-one'],
      ready: false,
    });
    await term.waitFor(/Resumed session long-one \(10000 messages\)/, { timeoutMs: 30_000 });
    const history = term.joinedHistory();
    const note = NOTE.exec(history);
    expect(note).not.toBeNull();
    const hidden = Number(note![1]!.replace(/,/g, ''));
    expect(hidden).toBeGreaterThan(9000);
    // The end is printed, the start is not, and what is printed follows the note: at most 300 rows of it.
    expect(history).toContain('answer number 2499');
    expect(history).not.toMatch(/^> request number 0$/m);
    expect(history).not.toContain(`answer number ${Math.floor(hidden / 4) - 1}\n`);
    const printed = history.slice(history.indexOf(note![0]) + note![0].length, history.indexOf('keel - ')).trim().split('\n');
    expect(printed.length).toBeGreaterThan(250);
    expect(printed.length).toBeLessThanOrEqual(300);
    expect(printed.at(-1)).toBe('answer number 2499');
    send(term, 'go on');
    await term.waitFor(/^the next answer$/m);
    expect(server.messageRequests()[0]!.body.messages).toHaveLength(10001);
  });

  it('a short session is printed whole, with no note', async () => {
    const { term } = await fixture.start([], { prepare: (ws) => writeSession(ws.home, ws.dir, 'short-one', 3), args: ['--ui', 'plain', '--resume', 'short-one'], ready: /Resumed session short-one \(12 messages\)/ });
    const history = term.joinedHistory();
    expect(history).not.toMatch(NOTE);
    for (let n = 0; n < 3; n++) expect(history).toMatch(new RegExp(`^> request number ${n}\\nlooking ${n}\\n\\[tool\\] read_file: f${n}\\.ts\\nanswer number ${n}$`, 'm'));
  });
});
