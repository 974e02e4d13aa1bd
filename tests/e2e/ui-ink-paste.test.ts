/**
 * A very large paste in the Ink UI, in a real terminal (tmux, private socket): the request leaves with the whole
 * text while the prompt and the transcript show a placeholder, not the text.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';

const fixture = terminalFixture();

const sentPrompt = (s: ScriptedServer, n = 0): string => {
  const content = s.messageRequests()[n]!.body.messages.at(-1).content;
  return typeof content === 'string' ? content : content.map((b: { text?: string }) => b.text ?? '').join('');
};

describe.skipIf(!hasTmux)('a 1 MB paste', () => {
  it('is sent whole, shown as a placeholder in the prompt and the transcript', async () => {
    const ui = await fixture.start([say('read all of it')]);
    const { ws, server } = ui;
    let { term } = ui;
    // 24,000 lines of 43 characters: about 1 MB.
    const big = Array.from({ length: 24_000 }, (_, i) => `log ${String(i).padStart(6, '0')}: ${'x'.repeat(30)}`).join('\n');
    const file = path.join(ws.home, 'paste.txt');
    writeFileSync(file, big);
    term.type('summarise: ');
    term.pasteFile(file);
    await term.waitFor(/summarise: \[Pasted text #1 \+24000 lines\]/, { timeoutMs: 60_000 });
    term.keys('Enter');
    // Generous: the request must not wait on laying out the paste (it took 23 s before).
    await term.waitFor(/read all of it/, { timeoutMs: 60_000 });
    expect(sentPrompt(server)).toBe(`summarise: ${big}`);
    const screen = term.history();
    expect(screen).toMatch(/> summarise: \[Pasted text #1 \+24000 lines\]/);
    expect(screen).not.toContain('log 012345');
    term.keys('C-d');
    await term.waitFor(/EXIT=0/);
    term.kill();

    // Resumed, the prompt shows its start and how much follows, not the megabyte.
    term = fixture.terminal({ ws, server, args: ['--continue'] });
    // The answer is printed after the prompt: its end.
    const resumed = await term.waitFor(/\[… 23,981 more lines not shown\][\s\S]*read all of it/, { history: true, timeoutMs: 60_000 });
    expect(resumed).toContain('> summarise: log 000000:');
    expect(resumed).not.toContain('log 000020');
  }, 300_000);
});
