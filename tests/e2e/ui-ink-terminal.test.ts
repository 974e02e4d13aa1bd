/** The Ink UI and the terminal itself: bracketed paste on and off, resizing, and leaving on a signal. */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { say, type ScriptStep, type ScriptedServer } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux, readBytes, type Terminal } from '../helpers/tmux.js';
import { until } from '../helpers/until.js';
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
    expect(s.requests).toHaveLength(0);
    t.keys('Enter');
    await t.waitFor(/got the short one/);
    // One request, with both lines: a newline of the paste that had sent would have sent the first line alone.
    expect(s.requests).toHaveLength(1);
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
    // Preloaded into keel: an exception nobody catches, once the UI is up (the test says when: start-up may be slow).
    const trigger = path.join(ws.dir, 'crash-now');
    const crash = ws.write('crash.mjs', `import { existsSync } from 'node:fs';\nconst timer = setInterval(() => { if (existsSync(${JSON.stringify(trigger)})) { clearInterval(timer); throw new Error('a crash for the test'); } }, 50);\ntimer.unref();\n`);
    const term = fixture.terminal({ ws, server, env: { NODE_OPTIONS: `--import=${crash}` } });
    await term.waitFor(/ask mode/);
    ws.write('crash-now', '');
    const end = await term.waitFor(/EXIT=\d+/);
    expect(end).toContain('a crash for the test');
    expect(end).toContain('EXIT=1');
    expect(await pasteModeLeftOn(term)).toBe(false);
  });
});

/**
 * Resizes the window and returns the screen once keel has drawn for the new size: its footer written after the
 * resize (recorded), then the screen with one live region on it.
 */
async function resizeAndWaitForRedraw(t: Terminal, width: number, height: number): Promise<string> {
  const file = path.join(fixture.tempDir('keel-redraw-'), `redraw-${width}x${height}.log`);
  t.record(file);
  t.resize(width, height);
  try {
    await until(() => readBytes(file).includes('ask mode'), `keel to redraw at ${width}×${height}`);
  } finally {
    await t.stopRecording();
    rmSync(file, { force: true });
  }
  const oneLiveRegion = (shown: string) => shown.match(/ask mode/g)?.length === 1 && shown.match(/›/g)?.length === 1 && !/esc to interrupt/.test(shown);
  let shown = '';
  try {
    await until(() => oneLiveRegion((shown = t.screen())), `one live region at ${width}×${height}`);
  } catch (err) {
    throw new Error(`${(err as Error).message}; the screen:\n${shown}`);
  }
  return shown;
}

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
    // The turn is over, its spinner gone: from now on only a resize makes keel draw.
    await t.waitFor(/^(?![\s\S]*esc to interrupt)[\s\S]*ask mode/);
    const small = await resizeAndWaitForRedraw(t, 40, 10);
    const screen = await resizeAndWaitForRedraw(t, 100, 30);

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
