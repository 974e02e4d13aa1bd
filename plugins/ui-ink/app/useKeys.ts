/**
 * Ink's `useInput` with three repairs every component of this UI needs: keys typed together in one chunk are
 * split back into keys (keys.ts), a bracketed paste arrives whole (bracketed.ts), at `onPaste` or, for
 * components that take no text, nowhere: a pasted "1" or "y" never answers a question; and a key reaches the
 * component on the screen when it was typed (keyRouter.ts).
 */
import { useContext, useLayoutEffect, useRef } from 'react';
import { useInput, type Key } from 'ink';
import { PasteReader } from '../bracketed.js';
import { splitKeys } from '../keys.js';
import { KeyRouter, KeyRouterContext } from './keyRouter.js';

export interface KeyOptions {
  isActive?: boolean;
  onPaste?(text: string): void;
  /** The router to register with, for the component that provides it (App); others find it in context. */
  router?: KeyRouter;
}

export function useKeys(onKey: (input: string, key: Key) => void, opts: KeyOptions = {}): void {
  const provided = useContext(KeyRouterContext);
  // Rendered alone (component tests): a router of its own, fed by Ink's useInput.
  const own = useRef<KeyRouter | null>(null);
  const router = opts.router ?? provided ?? (own.current ??= new KeyRouter());
  useInput((chunk, key) => router.dispatch(chunk, key), { isActive: router === own.current });
  const reader = useRef(new PasteReader());
  const latest = useRef({ onKey, opts });
  useLayoutEffect(() => {
    latest.current = { onKey, opts };
  });
  useLayoutEffect(
    () =>
      router.add({
        active: () => latest.current.opts.isActive !== false,
        handle(chunk, chunkKey) {
          const got = reader.current.feed(chunk, chunkKey);
          if (!got) return;
          if (got.kind === 'paste') return latest.current.opts.onPaste?.(got.text);
          for (const [input, key] of splitKeys(got.input, got.key)) latest.current.onKey(input, key);
        },
      }),
    [router],
  );
}
