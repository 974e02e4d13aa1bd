/**
 * Ink hands a run of typed bytes to the input handler as one string (it splits only at escape sequences), so
 * "abc" + Tab, or Ctrl+U Ctrl+D sent together, arrive as one chunk. A short chunk with control characters is
 * split back into keys; a long one is a paste and stays text.
 */
import type { Key } from 'ink';

export const PASTE_CHUNK = 64;

/** A key event with no key or modifier: plain text. */
export const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/** One key for one character, as Ink's parser would report it alone. */
export function keyOf(ch: string): [string, Key] {
  if (ch === '\r') return ['', { ...NO_KEY, return: true }];
  if (ch === '\t') return ['', { ...NO_KEY, tab: true }];
  if (ch === '\x7f') return ['', { ...NO_KEY, delete: true }];
  if (ch === '\b') return ['', { ...NO_KEY, backspace: true }];
  if (ch === '\n') return ['\n', NO_KEY];
  const code = ch.charCodeAt(0);
  if (code >= 1 && code <= 26) return [String.fromCharCode(code + 96), { ...NO_KEY, ctrl: true }];
  return [ch, NO_KEY];
}

/** The keys in a chunk: itself when it is one key, plain text or a paste; else one key per character (text runs kept together). */
export function splitKeys(input: string, key: Key): Array<[string, Key]> {
  if (input.length <= 1 || input.length > PASTE_CHUNK || !/[\x00-\x1f\x7f]/.test(input) || key.ctrl || key.meta) return [[input, key]];
  const keys: Array<[string, Key]> = [];
  let text = '';
  for (const ch of input) {
    if (/[\x00-\x1f\x7f]/.test(ch) && ch !== '\n') {
      if (text) keys.push([text, NO_KEY]);
      text = '';
      keys.push(keyOf(ch));
    } else text += ch;
  }
  if (text) keys.push([text, NO_KEY]);
  return keys;
}
