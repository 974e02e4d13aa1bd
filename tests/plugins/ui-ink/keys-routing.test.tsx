/**
 * A key reaches the handler of the frame on screen when it is read, even before React's passive effects (where
 * Ink subscribes handlers) have run: a user typing quickly, or a key pressed just as a dialog appears.
 */
import React, { useState } from 'react';
import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { KeyRouterContext, useKeyRouter } from '../../../plugins/ui-ink/app/keyRouter.js';
import { useKeys } from '../../../plugins/ui-ink/app/useKeys.js';

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup) fn();
  cleanup = [];
});

/** Waits for a frame turn by turn (setImmediate), so the next key is written as soon as the frame is drawn. */
async function frameShows(ui: { lastFrame(): string | undefined }, text: string): Promise<void> {
  for (let turns = 0; !ui.lastFrame()?.includes(text); turns++) {
    if (turns > 100_000) throw new Error(`no frame showed ${text}: ${ui.lastFrame()}`);
    await new Promise((r) => setImmediate(r));
  }
}

function Counter({ log }: { log: string[] }) {
  const [n, setN] = useState(0);
  useKeys((input) => {
    log.push(`${input}@${n}`);
    setN(n + 1);
  });
  return <Text>count={n}</Text>;
}

function Dialog({ onAnswer }: { onAnswer(a: string): void }) {
  useKeys((input) => onAnswer(input));
  return <Text>a dialog</Text>;
}

/** A UI's root as App is: one router for the whole tree, the prompt's keys given way to a dialog. */
function Screen({ typed, answers }: { typed: string[]; answers: string[] }) {
  const keys = useKeyRouter();
  const [dialog, setDialog] = useState(false);
  useKeys(
    (input) => {
      if (input === '?') setDialog(true);
      else typed.push(input);
    },
    { isActive: !dialog, router: keys },
  );
  return <KeyRouterContext.Provider value={keys}>{dialog ? <Dialog onAnswer={(a) => answers.push(a)} /> : <Text>the prompt</Text>}</KeyRouterContext.Provider>;
}

describe('keys', () => {
  it('a key read right after a frame is drawn is handled with the state that frame shows', async () => {
    const log: string[] = [];
    const ui = render(<Counter log={log} />);
    cleanup.push(() => ui.unmount());
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) {
      ui.stdin.write(key);
      await frameShows(ui, `count=${i + 1}`);
    }
    expect(log).toEqual(['a@0', 'b@1', 'c@2', 'd@3']);
  });

  it('a key pressed as soon as a dialog is drawn answers the dialog, and the prompt it replaced never sees it', async () => {
    const typed: string[] = [];
    const answers: string[] = [];
    const ui = render(<Screen typed={typed} answers={answers} />);
    cleanup.push(() => ui.unmount());
    ui.stdin.write('?');
    await frameShows(ui, 'a dialog');
    ui.stdin.write('y');
    expect(answers).toEqual(['y']);
    expect(typed).toEqual([]);
  });
});
