/**
 * One listener on Ink's input for the whole UI, handing each key to the components that take keys now. Ink's own
 * `useInput` attaches and detaches in passive effects, which run after a frame is drawn: a key typed in between
 * went to the component that had just given way (Ctrl+O pressed again the instant the output view appeared reached
 * the prompt, and was lost). Components here register in a layout effect, which runs in the same commit as the
 * frame, so a key always reaches what is on the screen. The router also keeps the time of every key, wherever it
 * went, for the dialogs' type-ahead guard (typeahead.ts).
 */
import { createContext, useRef } from 'react';
import { useInput, type Key } from 'ink';
import type { KeyTiming } from './typeahead.js';

export interface KeyListener {
  active(): boolean;
  handle(chunk: string, key: Key, timing: KeyTiming): void;
}

export class KeyRouter {
  private readonly listeners = new Set<KeyListener>();
  private lastKeyAt = -Infinity;

  /** `now`: the clock keys are timed by, in ms (tests pass their own). */
  constructor(readonly now: () => number = () => performance.now()) {}

  add(listener: KeyListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  dispatch(chunk: string, key: Key): void {
    const timing = { at: this.now(), previous: this.lastKeyAt };
    this.lastKeyAt = timing.at;
    for (const listener of [...this.listeners]) if (listener.active()) listener.handle(chunk, key, timing);
  }
}

export const KeyRouterContext = createContext<KeyRouter | null>(null);

/** The router of a UI's root component: the one subscription to Ink's input, for the root's whole life. */
export function useKeyRouter(now?: () => number): KeyRouter {
  const router = useRef<KeyRouter | null>(null);
  const keys = (router.current ??= new KeyRouter(now));
  useInput((input, key) => keys.dispatch(input, key));
  return keys;
}
