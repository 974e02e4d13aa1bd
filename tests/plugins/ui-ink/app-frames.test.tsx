/**
 * The whole App rendered by Ink as on a terminal (not ink-testing-library's debug mode, which rewrites everything
 * on each frame): what each frame writes, while a long answer streams.
 */
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import React from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { startSession, type ModeContext } from '../../../kernel/index.js';
import { importWithoutCiMarkers } from '../../../plugins/ui-ink/ci-markers.js';
import { Controller } from '../../../plugins/ui-ink/controller.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { QuestionQueue } from '../../../plugins/ui-ink/questions.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import { Transcript } from '../../../plugins/ui-ink/transcript.js';
import { testKernel } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';
import { SETTLED_MS } from '../../../plugins/ui-ink/app/typeahead.js';

/** A terminal as Ink sees it: a TTY of fixed size that keeps every write. */
class FakeTerminal extends EventEmitter {
  isTTY = true;
  writes: string[] = [];
  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    super();
  }
  write(chunk: unknown): boolean {
    this.writes.push(String(chunk));
    return true;
  }
}

/**
 * A keyboard as Ink sees it: a real stream, so keys typed while Ink has no `readable` listener (React attaches it
 * in an effect that may run after a frame is drawn) wait in its buffer as they would on a terminal.
 */
class FakeKeyboard extends PassThrough {
  isTTY = true;
  constructor() {
    super({ encoding: 'utf8' });
  }
  /** Keys typed, as a terminal sends them. */
  type(data: string): void {
    this.write(data);
  }
  setRawMode(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

// Loaded as the UI loads them: with CI variables set (as on a CI runner), Ink would otherwise draw nothing until unmount.
const { render } = await importWithoutCiMarkers(() => import('ink'));
const { App } = await importWithoutCiMarkers(() => import('../../../plugins/ui-ink/app/App.js'));
const { TestClock } = await importWithoutCiMarkers(() => import('../../helpers/ui-keys.js'));

let unmount: (() => void) | undefined;
afterEach(() => {
  unmount?.();
  unmount = undefined;
});


async function mountApp(columns: number, rows: number, now?: () => number) {
  const kernel = testKernel([], { model: 'test-model' });
  const paint = makePaint(false);
  const glyphs = glyphsFor({ LANG: 'C.UTF-8' });
  const transcript = new Transcript({ paint, glyphs, width: () => columns, frameMs: 1 });
  const ctx = { kernel, options: {}, startSession: (o?: object) => startSession(kernel, { ...o }) } as unknown as ModeContext;
  const questions = new QuestionQueue();
  const controller = new Controller(kernel, ctx, transcript, questions, { entries: [], add() {}, search: () => null }, paint);
  controller.session = await ctx.startSession();
  const stdout = new FakeTerminal(columns, rows);
  const keyboard = new FakeKeyboard();
  const instance = render(<App controller={controller} glyphs={glyphs} paint={paint} initialPicker={null} listSessions={async () => []} onExit={() => undefined} now={now} />, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: keyboard as unknown as NodeJS.ReadStream,
    exitOnCtrlC: false,
    patchConsole: false,
    // Every change drawn: frames are counted, not timed.
    maxFps: 10_000,
  });
  unmount = () => {
    instance.unmount();
    transcript.dispose();
  };
  return { transcript, stdout, keyboard, questions };
}

/** The screen's live region as last drawn: the last write, control sequences taken out. */
function lastDrawn(stdout: FakeTerminal): string {
  return (
    stdout.writes
      .map((w) => w.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''))
      .filter((w) => w.trim())
      .at(-1) ?? ''
  );
}

describe('the Ink UI while a long answer streams', () => {
  it('draws frames whose size does not grow with the answer: finished rows go to the scrollback once, the frame holds the row being written', async () => {
    const columns = 100;
    const { transcript, stdout } = await mountApp(columns, 30);
    await until(() => stdout.writes.length > 0, 'the first frame');
    // What a frame with an empty answer costs: the live region (prompt, footer) redrawn. (Starting the turn
    // draws nothing new: the screen is the same.)
    const base = Math.max(...stdout.writes.map((w) => w.length));
    transcript.startTurn();
    // One paragraph with no newline, as the bench streams it (bench/ui.mjs), 400 pieces: about 15 rows of 100.
    const marks: number[] = [];
    for (let i = 0; i < 400; i++) {
      const before = stdout.writes.length;
      transcript.onEvent({ type: 'text_delta', text: `word${i} and some more words to draw. `, index: 0 });
      // One frame per piece, however loaded the machine: pieces that pile up between frames would make one larger frame.
      await until(() => stdout.writes.length > before, `the frame of piece ${i}`);
      marks.push(stdout.writes.length);
    }
    const late = stdout.writes.slice(marks[299]);
    expect(late.length).toBeGreaterThan(50);
    // Each late frame: the live region, the row being written and at most a row or two printed above it. Before
    // rows were handed out, a frame rewrote every row of the paragraph so far (about 15 rows here).
    for (const write of late) expect(write.length).toBeLessThan(base + 3 * columns);
    // Nothing was lost: every piece is on the screen once, in order, rows joined again.
    transcript.onEvent({ type: 'assistant_message', message: { role: 'assistant', content: [] }, response: {} as never });
    transcript.endTurn();
    await until(() => stdout.writes.join('').includes('word399'), 'the last piece');
    const all = stdout.writes.join('');
    const printed = all.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    for (const i of [0, 150, 399]) expect(printed).toMatch(new RegExp(`word${i}\\b`));
  });
});

describe('Ctrl+O', () => {
  it('opens the full output of the latest collapsed result above the prompt, scrolls it, goes to older ones, and Esc or Ctrl+O closes it, the draft kept', async () => {
    const { transcript, stdout, keyboard } = await mountApp(80, 24);
    const shows = (text: string) => () => lastDrawn(stdout).includes(text);
    const wait = async (check: () => boolean, what: string) => {
      try {
        await until(check, what);
      } catch (err) {
        throw new Error(`${(err as Error).message}; the screen:\n${lastDrawn(stdout)}`);
      }
    };
    await wait(() => stdout.writes.length > 0, 'the first frame');
    keyboard.type('\x0f');
    await wait(shows('No collapsed tool output to expand'), 'the note that nothing is collapsed');
    const older = { id: 'a', name: 'bash', input: { command: 'seq 1 8' } };
    const latest = { id: 'b', name: 'bash', input: { command: 'seq 1 40' } };
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `out-${i + 1}`).join('\n');
    transcript.onEvent({ type: 'tool_end', call: older, result: { content: lines(8) }, durationMs: 1 });
    transcript.onEvent({ type: 'tool_end', call: latest, result: { content: lines(40) }, durationMs: 1 });
    const printed = () => stdout.writes.join('').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    await wait(() => printed().includes('… +36 lines (ctrl+o to expand)'), 'the collapsed result');
    keyboard.type('draft');
    await wait(shows('draft'), 'the draft');
    keyboard.type('\x0f');
    await wait(shows('esc or ctrl+o back'), 'the output view');
    let screen = lastDrawn(stdout);
    expect(screen).toContain('bash(seq 1 40) · 40 lines');
    expect(screen).toContain('out-5\n');
    expect(screen).not.toContain('out-40');
    // The view fits the screen with the prompt under it.
    expect(screen.split('\n').length).toBeLessThanOrEqual(24);
    keyboard.type('G');
    await wait(shows('out-40'), 'the end of the output');
    screen = lastDrawn(stdout);
    expect(screen).toMatch(/rows \d+-40 of 40/);
    // Keys go to the view, not the prompt.
    keyboard.type('\x1b[D');
    await wait(shows('bash(seq 1 8) · 8 lines · 1/2'), 'the older result');
    expect(lastDrawn(stdout)).toContain('out-8');
    keyboard.type('\x1b');
    await wait(() => !lastDrawn(stdout).includes('esc or ctrl+o back'), 'the view to close');
    screen = lastDrawn(stdout);
    expect(screen).toContain('draft');
    expect(screen).not.toMatch(/draftG|Gdraft/);
    keyboard.type('\x0f');
    await wait(shows('bash(seq 1 40)'), 'the view to open again');
    keyboard.type('\x0f');
    await wait(() => !lastDrawn(stdout).includes('esc or ctrl+o back'), 'Ctrl+O to close the view');
    expect(lastDrawn(stdout)).toContain('draft');
  });
});

describe('the Ink UI when a question appears while the user types', () => {
  it('keeps the draft typed before it, drops the keys typed through its appearance (never into the draft), and takes an answer after a pause', async () => {
    const clock = new TestClock();
    const { stdout, keyboard, questions } = await mountApp(80, 24, clock.now);
    const drawn = () => lastDrawn(stdout);
    const shows = (text: string) => () => drawn().includes(text);
    const wait = async (check: () => boolean, what: string) => {
      try {
        await until(check, what);
      } catch (err) {
        throw new Error(`${(err as Error).message}; the screen:\n${drawn()}`);
      }
    };
    await wait(() => stdout.writes.length > 0, 'the first frame');
    const type = async (keys: string, then: () => boolean, what: string) => {
      // One key at a time, each read by Ink before the clock moves on to the next.
      for (const key of keys) {
        clock.advance(120);
        keyboard.type(key);
        await until(() => keyboard.readableLength === 0, `the key ${JSON.stringify(key)} to be read`);
        await new Promise((r) => setTimeout(r, 5));
      }
      await wait(then, what);
    };
    await type('yes, and th', shows('yes, and th'), 'the draft');
    let answer: unknown;
    void questions.ask({ kind: 'permission', call: { id: 'c1', name: 'bash', input: { command: 'rm -rf build' } }, options: ['allow_once', 'allow_session', 'deny', 'deny_session'] }).then((a) => (answer = a));
    await wait(shows('bash wants permission'), 'the dialog');
    await type('en y1\r', shows('Keys typed before this appeared are ignored'), 'the hint');
    expect(answer).toBeUndefined();
    expect(drawn()).toContain('rm -rf build');
    clock.advance(SETTLED_MS);
    keyboard.type('y');
    await wait(() => answer !== undefined, 'the answer');
    expect(answer).toEqual({ kind: 'permission', choice: 'allow_once' });
    await wait(() => !drawn().includes('wants permission'), 'the dialog to close');
    // The prompt is back with the draft as it was: none of the keys the dialog dropped reached it.
    expect(drawn()).toMatch(/^› yes, and th\s*$/m);
  });
});
