/**
 * One listener on Ink's input for the whole UI, handing each key to the components that take keys now. Ink's own
 * `useInput` attaches and detaches in passive effects, which run after a frame is drawn: a key typed in between
 * went to the component that had just given way (Ctrl+O pressed again the instant the output view appeared reached
 * the prompt, and was lost). Components here register in a layout effect, which runs in the same commit as the
 * frame, so a key always reaches what is on the screen.
 */
import { createContext, useRef } from 'react';
import { useInput, type Key } from 'ink';

export interface KeyListener {
  active(): boolean;
  handle(chunk: string, key: Key): void;
}

export class KeyRouter {
  private readonly listeners = new Set<KeyListener>();

  add(listener: KeyListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  dispatch(chunk: string, key: Key): void {
    for (const listener of [...this.listeners]) if (listener.active()) listener.handle(chunk, key);
  }
}

export const KeyRouterContext = createContext<KeyRouter | null>(null);

/** The router of a UI's root component: the one subscription to Ink's input, for the root's whole life. */
export function useKeyRouter(): KeyRouter {
  const router = useRef<KeyRouter | null>(null);
  const keys = (router.current ??= new KeyRouter());
  useInput((input, key) => keys.dispatch(input, key));
  return keys;
}
