/**
 * The whole App rendered by Ink as on a terminal (not ink-testing-library's debug mode, which rewrites everything
 * on each frame): what each frame writes, while a long answer streams.
 */
import { EventEmitter } from 'node:events';
import React from 'react';
import { render } from 'ink';
import { afterEach, describe, expect, it } from 'vitest';
import { startSession, type ModeContext } from '../../../kernel/index.js';
import { App } from '../../../plugins/ui-ink/app/App.js';
import { Controller } from '../../../plugins/ui-ink/controller.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { QuestionQueue } from '../../../plugins/ui-ink/questions.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import { Transcript } from '../../../plugins/ui-ink/transcript.js';
import { testKernel } from '../../helpers/kernel.js';

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

class FakeKeyboard extends EventEmitter {
  isTTY = true;
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read(): null {
    return null;
  }
}

let unmount: (() => void) | undefined;
afterEach(() => {
  unmount?.();
  unmount = undefined;
});

const tick = (ms = 2) => new Promise((r) => setTimeout(r, ms));

async function mountApp(columns: number, rows: number) {
  const kernel = testKernel([], { model: 'test-model' });
  const paint = makePaint(false);
  const glyphs = glyphsFor({ LANG: 'C.UTF-8' });
  const transcript = new Transcript({ paint, glyphs, width: () => columns, frameMs: 1 });
  const ctx = { kernel, options: {}, startSession: (o?: object) => startSession(kernel, { ...o }) } as unknown as ModeContext;
  const controller = new Controller(kernel, ctx, transcript, new QuestionQueue(), { entries: [], add() {}, search: () => null }, paint);
  controller.session = await ctx.startSession();
  const stdout = new FakeTerminal(columns, rows);
  const instance = render(<App controller={controller} glyphs={glyphs} paint={paint} initialPicker={null} listSessions={async () => []} onExit={() => undefined} />, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: new FakeKeyboard() as unknown as NodeJS.ReadStream,
    exitOnCtrlC: false,
    patchConsole: false,
    // Every change drawn: frames are counted, not timed.
    maxFps: 10_000,
  });
  unmount = () => {
    instance.unmount();
    transcript.dispose();
  };
  return { transcript, stdout };
}

describe('the Ink UI while a long answer streams', () => {
  it('draws frames whose size does not grow with the answer: finished rows go to the scrollback once, the frame holds the row being written', async () => {
    const columns = 100;
    const { transcript, stdout } = await mountApp(columns, 30);
    await tick(20);
    transcript.startTurn();
    await tick(20);
    // What a frame with an empty answer costs: the live region (prompt, footer) redrawn.
    const base = Math.max(...stdout.writes.map((w) => w.length));
    // One paragraph with no newline, as the bench streams it (bench/ui.mjs), 400 pieces: about 15 rows of 100.
    const marks: number[] = [];
    for (let i = 0; i < 400; i++) {
      transcript.onEvent({ type: 'text_delta', text: `word${i} and some more words to draw. `, index: 0 });
      await tick();
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
    await tick(20);
    const all = stdout.writes.join('');
    const printed = all.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    for (const i of [0, 150, 399]) expect(printed).toMatch(new RegExp(`word${i}\\b`));
  });
});
