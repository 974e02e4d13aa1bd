/**
 * Bracketed paste (DEC mode 2004): the terminal wraps pasted text in `ESC [200~` … `ESC [201~`. Ink splits its
 * input at escape sequences and drops the ESC, so a paste reaches a handler as `[200~`, the text (in one or
 * more pieces, a piece of one character parsed as a key), then `[201~`. `PasteReader` puts the text back
 * together, so a paste arrives as one unit and the newlines inside it never act as Enter.
 */
import type { Key } from 'ink';

export const PASTE_START = '[200~';
export const PASTE_END = '[201~';

/** Turns bracketed paste on for `stream`; the function returned turns it off (once; later calls do nothing). */
export function bracketedPaste(stream: { write(s: string): unknown }): () => void {
  let on = true;
  write(stream, '\x1b[?2004h');
  return () => {
    if (!on) return;
    on = false;
    write(stream, '\x1b[?2004l');
  };
}

function write(stream: { write(s: string): unknown }, s: string): void {
  try {
    stream.write(s);
  } catch {
    // a terminal that is gone (SIGHUP) cannot be told anything
  }
}

export type Input = { kind: 'key'; input: string; key: Key } | { kind: 'paste'; text: string };

export class PasteReader {
  private buffer: string | null = null;

  /** What one input event means: a key, a finished paste, or nothing yet (inside a paste). */
  feed(input: string, key: Key): Input | null {
    if (this.buffer === null) {
      if (input === PASTE_START) {
        this.buffer = '';
        return null;
      }
      return { kind: 'key', input, key };
    }
    if (input === PASTE_END) {
      const text = this.buffer.replace(/\r\n?/g, '\n');
      this.buffer = null;
      return { kind: 'paste', text };
    }
    this.buffer += rawText(input, key);
    return null;
  }
}

/** The characters an input event stood for (Ink reports a lone Enter or Tab as a key, without its text). */
function rawText(input: string, key: Key): string {
  if (key.return) return '\r';
  if (key.tab) return '\t';
  if (key.ctrl && /^[a-z]$/.test(input)) return String.fromCharCode(input.charCodeAt(0) - 96);
  return input;
}
