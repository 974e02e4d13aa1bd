/**
 * The prompt's text and cursor, and the Emacs-style edits on them. Pure: every edit returns a new state, so
 * the component stays a thin key-to-edit map and the edits are tested without a terminal.
 */
export interface EditorState {
  text: string;
  cursor: number;
}

export const empty: EditorState = { text: '', cursor: 0 };

export function insert(s: EditorState, chars: string): EditorState {
  return { text: s.text.slice(0, s.cursor) + chars + s.text.slice(s.cursor), cursor: s.cursor + chars.length };
}

export function backspace(s: EditorState): EditorState {
  if (s.cursor === 0) return s;
  return { text: s.text.slice(0, s.cursor - 1) + s.text.slice(s.cursor), cursor: s.cursor - 1 };
}

export function deleteForward(s: EditorState): EditorState {
  if (s.cursor >= s.text.length) return s;
  return { text: s.text.slice(0, s.cursor) + s.text.slice(s.cursor + 1), cursor: s.cursor };
}

export function move(s: EditorState, to: number): EditorState {
  return { text: s.text, cursor: Math.max(0, Math.min(s.text.length, to)) };
}

function lineStart(s: EditorState): number {
  return s.text.lastIndexOf('\n', s.cursor - 1) + 1;
}

function lineEnd(s: EditorState): number {
  const end = s.text.indexOf('\n', s.cursor);
  return end === -1 ? s.text.length : end;
}

export const home = (s: EditorState) => move(s, lineStart(s));
export const end = (s: EditorState) => move(s, lineEnd(s));
export const left = (s: EditorState) => move(s, s.cursor - 1);
export const right = (s: EditorState) => move(s, s.cursor + 1);

/** Ctrl+K: deletes to the end of the line. */
export function killToEnd(s: EditorState): EditorState {
  const stop = lineEnd(s);
  const to = stop === s.cursor && stop < s.text.length ? stop + 1 : stop;
  return { text: s.text.slice(0, s.cursor) + s.text.slice(to), cursor: s.cursor };
}

/** Ctrl+U: deletes to the start of the line. */
export function killToStart(s: EditorState): EditorState {
  const start = lineStart(s);
  return { text: s.text.slice(0, start) + s.text.slice(s.cursor), cursor: start };
}

function wordStart(text: string, from: number): number {
  let i = from;
  while (i > 0 && /\s/.test(text[i - 1])) i--;
  while (i > 0 && !/\s/.test(text[i - 1])) i--;
  return i;
}

function wordEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i])) i++;
  while (i < text.length && !/\s/.test(text[i])) i++;
  return i;
}

/** Ctrl+W / Alt+Backspace: deletes the word before the cursor. */
export function killWordBack(s: EditorState): EditorState {
  const start = wordStart(s.text, s.cursor);
  return { text: s.text.slice(0, start) + s.text.slice(s.cursor), cursor: start };
}

export const wordLeft = (s: EditorState) => move(s, wordStart(s.text, s.cursor));
export const wordRight = (s: EditorState) => move(s, wordEnd(s.text, s.cursor));

/** Up/Down inside multi-line text: the same column on the line above or below, or null at the edge. */
export function lineUp(s: EditorState): EditorState | null {
  const start = lineStart(s);
  if (start === 0) return null;
  const column = s.cursor - start;
  const prevStart = s.text.lastIndexOf('\n', start - 2) + 1;
  return move(s, Math.min(prevStart + column, start - 1));
}

export function lineDown(s: EditorState): EditorState | null {
  const stop = lineEnd(s);
  if (stop >= s.text.length) return null;
  const column = s.cursor - lineStart(s);
  const nextEnd = s.text.indexOf('\n', stop + 1);
  return move(s, Math.min(stop + 1 + column, nextEnd === -1 ? s.text.length : nextEnd));
}

/** The word being typed at the cursor, e.g. `@src/ma` or `/co`, with where it starts. */
export function currentWord(s: EditorState): { word: string; start: number } {
  let start = s.cursor;
  while (start > 0 && !/\s/.test(s.text[start - 1])) start--;
  return { word: s.text.slice(start, s.cursor), start };
}

export function replaceWord(s: EditorState, start: number, replacement: string): EditorState {
  return { text: s.text.slice(0, start) + replacement + s.text.slice(s.cursor), cursor: start + replacement.length };
}
