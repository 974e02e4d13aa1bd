/**
 * The keyboard of an Ink component test, on a clock the test drives: dialogs guard against type-ahead by when keys
 * arrive (plugins/ui-ink/app/typeahead.ts), so a test says when each key is typed rather than depending on how fast
 * the machine is.
 */
import React from 'react';
import { useInput } from 'ink';
import { KeyRouter, KeyRouterContext } from '../../plugins/ui-ink/app/keyRouter.js';

/** A clock that moves only when told to. */
export class TestClock {
  ms = 1_000_000;
  readonly now = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** Feeds Ink's input to `router` for everything inside, as App does. */
export function Keyboard(props: { router: KeyRouter; children: React.ReactNode }): React.ReactElement {
  useInput((input, key) => props.router.dispatch(input, key));
  return <KeyRouterContext.Provider value={props.router}>{props.children}</KeyRouterContext.Provider>;
}

/**
 * `element` on the keyboard of a user who reads every dialog before answering: the clock moves on ten seconds each
 * time it is read, so every key comes long after the dialog appeared and after the key before it.
 */
export function patient(element: React.ReactElement): React.ReactElement {
  let ms = 0;
  return <Keyboard router={new KeyRouter(() => (ms += 10_000))}>{element}</Keyboard>;
}
