/**
 * Ink's `useInput` with two repairs every component of this UI needs: keys typed together in one chunk are
 * split back into keys (keys.ts), and a bracketed paste arrives whole (bracketed.ts), at `onPaste` or, for
 * components that take no text, nowhere: a pasted "1" or "y" never answers a question.
 */
import { useRef } from 'react';
import { useInput, type Key } from 'ink';
import { PasteReader } from '../bracketed.js';
import { splitKeys } from '../keys.js';

export interface KeyOptions {
  isActive?: boolean;
  onPaste?(text: string): void;
}

export function useKeys(onKey: (input: string, key: Key) => void, opts: KeyOptions = {}): void {
  const reader = useRef(new PasteReader());
  useInput(
    (chunk, chunkKey) => {
      const got = reader.current.feed(chunk, chunkKey);
      if (!got) return;
      if (got.kind === 'paste') return opts.onPaste?.(got.text);
      for (const [input, key] of splitKeys(got.input, got.key)) onKey(input, key);
    },
    { isActive: opts.isActive !== false },
  );
}
