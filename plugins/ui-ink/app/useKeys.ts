/**
 * Ink's `useInput` with the repairs every component of this UI needs: keys typed together in one chunk are
 * split back into keys (keys.ts), a bracketed paste arrives whole (bracketed.ts), at `onPaste` or, for
 * components that take no text, nowhere: a pasted "1" or "y" never answers a question; a key reaches the
 * component on the screen when it was typed (keyRouter.ts); and, for a dialog that asks for a decision
 * (`guard`), keys typed for the prompt never answer it (typeahead.ts).
 */
import { useContext, useLayoutEffect, useRef, useState } from 'react';
import { useInput, type Key } from 'ink';
import { PasteReader } from '../bracketed.js';
import { splitKeys } from '../keys.js';
import { KeyRouter, KeyRouterContext } from './keyRouter.js';
import { classify, TypeaheadGuard, type KeyTiming } from './typeahead.js';

export interface KeyOptions {
  isActive?: boolean;
  onPaste?(text: string): void;
  /** The router to register with, for the component that provides it (App); others find it in context. */
  router?: KeyRouter;
  /** A dialog asking for a decision: keys typed before it could be read are dropped (typeahead.ts). */
  guard?: boolean;
}

/** Returns how many keys the guard dropped (0 without `guard`). */
export function useKeys(onKey: (input: string, key: Key) => void, opts: KeyOptions = {}): number {
  const provided = useContext(KeyRouterContext);
  // Rendered alone (component tests, the trust question): a router of its own, fed by Ink's useInput.
  const own = useRef<KeyRouter | null>(null);
  const router = opts.router ?? provided ?? (own.current ??= new KeyRouter());
  useInput((chunk, key) => router.dispatch(chunk, key), { isActive: router === own.current });
  const reader = useRef(new PasteReader());
  const latest = useRef({ onKey, opts });
  const [dropped, setDropped] = useState(0);
  useLayoutEffect(() => {
    latest.current = { onKey, opts };
  });
  useLayoutEffect(() => {
    // Shown now: the layout effect runs in the commit that draws the component.
    const guard = opts.guard ? new TypeaheadGuard(router.now()) : null;
    const admit = (input: string, key: Key | null, timing: KeyTiming) => {
      if (!guard || guard.admit(classify(input, key), timing)) return true;
      setDropped(guard.dropped);
      return false;
    };
    // A paste is judged by when it began: its pieces arrive together, each one "typed" just after the one before.
    let pasteTiming: KeyTiming | null = null;
    return router.add({
      active: () => latest.current.opts.isActive !== false,
      handle(chunk, chunkKey, timing) {
        pasteTiming ??= timing;
        const got = reader.current.feed(chunk, chunkKey);
        if (!got) return;
        const began = pasteTiming;
        pasteTiming = null;
        if (got.kind === 'paste') {
          if (admit(got.text, null, began)) latest.current.opts.onPaste?.(got.text);
          return;
        }
        for (const [input, key] of splitKeys(got.input, got.key)) if (admit(input, key, timing)) latest.current.onKey(input, key);
      },
    });
  }, [router]);
  return dropped;
}
