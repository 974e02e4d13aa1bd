/**
 * Text from outside the UI — tool output, the model's words, a command it asks to run, a file's diff, an error a
 * server sent — made safe to write to a terminal. Its escape sequences and control characters are shown, never
 * obeyed, so it cannot move the cursor, erase or rewrite the line the user is reading (a permission question whose
 * `curl … | sh` hides behind `\r` and "erase line"), conceal text, set the clipboard (OSC 52) or the window title.
 * They are shown in `cat -v`'s caret notation (ESC as `^[`, CR as `^M`); C1 controls and the bidirectional
 * overrides and isolates that reorder what is shown (Trojan Source) as `<U+202E>`. Newlines and tabs stay; CRLF is
 * a newline. The UI's own colours are added after this, so they are not touched. The notation is the kernel's
 * (`visibleControls`), shared with the plain UI and `keel -p` on a terminal.
 */
import { visibleControls } from '../../kernel/index.js';

export { visibleControls };

/**
 * A copy of `value` with every string in it passed through `visibleControls`: plain objects and arrays are copied,
 * anything else (a Map, a class instance) is kept as it is. For what the UI shows only, never for what it answers.
 */
export function visibleInside<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return visibleControls(value) as T;
  if (depth > 12 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => visibleInside(item, depth + 1)) as T;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = visibleInside(item, depth + 1);
  return copy as T;
}

/** `visibleControls` for what a plugin's command prints: its colours (SGR) are kept, every other control is shown. */
export function visibleControlsKeepingColours(text: string): string {
  // split() with a capture group: the colours are the odd parts.
  return text
    .replace(/\r\n/g, '\n')
    .split(/(\x1b\[[0-9;:]*m)/)
    .map((part, i) => (i % 2 === 1 ? part : visibleControls(part)))
    .join('');
}
