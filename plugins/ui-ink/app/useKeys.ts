/**
 * Ink's `useInput` with three repairs every component of this UI needs: keys typed together in one chunk are
 * split back into keys (keys.ts), a bracketed paste arrives whole (bracketed.ts), at `onPaste` or, for
 * components that take no text, nowhere: a pasted "1" or "y" never answers a question; and a key reaches the
 * handler of the frame on screen when it is read.
 *
 * Ink (re)subscribes a handler in a passive effect, which React runs some time after the frame is drawn: a key
 * read in between went to the previous render's handler, with its stale state, and a key pressed just as a
 * dialog appeared went to the prompt the dialog replaced (the dialog was not listening yet). So each component
 * keeps its newest handler and whether it is active in a list per stdin, updated when React commits the frame
 * (a layout effect); every mounted component stays subscribed to Ink, and the first one Ink has subscribed
 * delivers each key to all active ones.
 */
import { useCallback, useEffect, useLayoutEffect, useRef } from 'react';
import { useInput, useStdin, type Key } from 'ink';
import { PasteReader } from '../bracketed.js';
import { splitKeys } from '../keys.js';

export interface KeyOptions {
  isActive?: boolean;
  onPaste?(text: string): void;
}

interface Listener {
  active: boolean;
  /** Ink's subscription of this component is in place (it runs after the first commit). */
  subscribed: boolean;
  feed(chunk: string, key: Key): void;
}

const listeners = new WeakMap<object, Listener[]>();

export function useKeys(onKey: (input: string, key: Key) => void, opts: KeyOptions = {}): void {
  const { stdin } = useStdin();
  const reader = useRef(new PasteReader());
  const self = useRef<Listener>({ active: false, subscribed: false, feed: () => undefined });

  useLayoutEffect(() => {
    self.current.active = opts.isActive !== false;
    self.current.feed = (chunk, chunkKey) => {
      const got = reader.current.feed(chunk, chunkKey);
      if (!got) return;
      if (got.kind === 'paste') return opts.onPaste?.(got.text);
      for (const [input, key] of splitKeys(got.input, got.key)) onKey(input, key);
    };
  });

  useLayoutEffect(() => {
    const list = listeners.get(stdin) ?? [];
    listeners.set(stdin, list);
    const me = self.current;
    list.push(me);
    return () => {
      list.splice(list.indexOf(me), 1);
    };
  }, [stdin]);

  const receive = useCallback(
    (chunk: string, chunkKey: Key) => {
      const list = listeners.get(stdin) ?? [];
      if (list.find((l) => l.subscribed) !== self.current) return;
      for (const listener of [...list]) if (listener.active) listener.feed(chunk, chunkKey);
    },
    [stdin],
  );
  useInput(receive);
  useEffect(() => {
    const me = self.current;
    me.subscribed = true;
    return () => {
      me.subscribed = false;
    };
  }, []);
}
