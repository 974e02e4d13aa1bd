/** The Ink UI and the terminal itself: bracketed paste on and off, resizing, and leaving on a signal. */
import { describe, expect, it } from 'vitest';
import { say, type ScriptStep, type ScriptedServer } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux, type Terminal } from '../helpers/tmux.js';
import { streamedAnswer } from '../helpers/ui-fixtures.js';

const fixture = terminalFixture();

const start = (script: ScriptStep[], opts: { width?: number; height?: number } = {}) => fixture.start(script, opts);

const sentPrompt = (s: ScriptedServer, n = 0): string => {
  const content = s.requests[n].body.messages.at(-1).content;
  return typeof content === 'string' ? content : content.map((b: { text?: string }) => b.text ?? '').join('');
};

/** After keel has left, the shell's terminal echoes a paste: with bracketed paste still on, its marks show. */
async function pasteModeLeftOn(t: Terminal): Promise<boolean> {
  t.paste('after-exit');
  const screen = await t.waitFor(/after-exit/);
  return /\^\[\[20[01]~/.test(screen);
}

describe.skipIf(!hasTmux)('bracketed paste', () => {
  it('a paste arrives as one unit: its newlines never send, a large one collapses and is sent whole; the mode is off after exit', async () => {
    const { term: t, server: s } = await start([say('got the short one'), say('got the long one')]);
    t.paste('first pasted line\nsecond pasted line\n');
    await t.waitFor(/› first pasted line\n\s+second pasted line/);
    await new Promise((r) => setTimeout(r, 300));
    expect(s.requests).toHaveLength(0);
    t.keys('Enter');
    await t.waitFor(/got the short one/);
    expect(sentPrompt(s, 0)).toBe('first pasted line\nsecond pasted line');

    const big = Array.from({ length: 40 }, (_, i) => `log line ${i}: ${'x'.repeat(30)}`).join('\n');
    t.type('explain this log: ');
    t.paste(big);
    await t.waitFor(/explain this log: \[Pasted text #1 \+40 lines\]/);
    expect(s.requests).toHaveLength(1);
    t.keys('Enter');
    await t.waitFor(/got the long one/);
    expect(sentPrompt(s, 1)).toBe(`explain this log: ${big}`);

    t.keys('C-d');
    await t.waitFor(/EXIT=0/);
    expect(await pasteModeLeftOn(t)).toBe(false);
  });

  const codes = { INT: 130, TERM: 143, HUP: 129 } as const;
  for (const signal of ['INT', 'TERM', 'HUP'] as const) {
    it(`SIG${signal} makes the UI leave with the session saved, and turns bracketed paste off`, async () => {
      const { term: t } = await start([]);
      const pid = t.programPid();
      expect(pid).toBeGreaterThan(0);
      process.kill(pid!, `SIG${signal}`);
      const end = await t.waitFor(/EXIT=\d+/);
      expect(end).toContain(`EXIT=${codes[signal]}`);
      expect(end).toMatch(/Session saved\. Resume it with: keel --resume/);
      expect(await pasteModeLeftOn(t)).toBe(false);
    });
  }

  it('a crash turns bracketed paste off too', async () => {
    const ws = fixture.workspace();
    const server = await fixture.server([]);
    // Preloaded into keel: an exception nobody catches, once the UI is up.
    const crash = ws.write('crash.mjs', "setTimeout(() => { throw new Error('a crash for the test'); }, 1500);\n");
    const term = fixture.terminal({ ws, server, env: { NODE_OPTIONS: `--import=${crash}` } });
    await term.waitFor(/ask mode/);
    const end = await term.waitFor(/EXIT=\d+/);
    expect(end).toContain('a crash for the test');
    expect(end).toContain('EXIT=1');
    expect(await pasteModeLeftOn(term)).toBe(false);
  });
});

describe.skipIf(!hasTmux)('resizing the terminal', () => {
  it('redraws the live region during and after an answer without garbled or doubled lines; the scrollback keeps every line once', async () => {
    const { term: t } = await start([streamedAnswer(96, 'END-OF-ANSWER', 40), say('second answer')], { width: 100, height: 30 });
    t.type('stream please');
    t.keys('Enter');
    await t.waitFor(/w30 /);
    t.resize(40, 10);
    await t.waitFor(/w50 /);
    t.resize(100, 30);
    await t.waitFor(/END-OF-ANSWER/, { timeoutMs: 60_000 });
    await t.waitFor(/ask mode/);
    t.resize(40, 10);
    await t.waitFor(/ask mode/);
    await new Promise((r) => setTimeout(r, 500));
    const small = t.screen();
    t.resize(100, 30);
    await new Promise((r) => setTimeout(r, 500));
    const screen = await t.waitFor(/ask mode/);

    for (const shown of [small, screen]) {
      // One live region: one prompt, one footer, no spinner left behind.
      expect(shown.match(/ask mode/g), shown).toHaveLength(1);
      expect(shown.match(/›/g), shown).toHaveLength(1);
      expect(shown, shown).not.toMatch(/esc to interrupt/);
    }
    // Every streamed word once, in order (lines printed while the window was narrow are wrapped at its width),
    // the answer's end once, the prompt once, and nothing of the old live regions.
    const all = t.joinedHistory().split('\n').map((l) => l.trim());
    const words = all.join(' ').split(/\s+/);
    const expected = Array.from({ length: 96 }, (_, i) => `w${i}`);
    for (const word of expected) expect(words.filter((w) => w === word), `${word}\n${all.join('\n')}`).toHaveLength(1);
    const at = expected.map((word) => words.indexOf(word));
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(all.filter((l) => l.includes('END-OF-ANSWER'))).toHaveLength(1);
    expect(all.filter((l) => l === '> stream please')).toHaveLength(1);
    expect(all.join('\n')).not.toMatch(/esc to interrupt/);
    expect(all.filter((l) => l.includes('ask mode'))).toHaveLength(1);

    // The next turn still works at the new size.
    t.type('again');
    t.keys('Enter');
    await t.waitFor(/second answer/);
  }, 120_000);
});
