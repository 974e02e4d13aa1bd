/**
 * What the plain UI asks of the terminal: bracketed paste (DEC mode 2004) while it runs, switched off again
 * however the process ends, and ASCII-only output under a locale that is not UTF-8.
 */
import { writeSync } from 'node:fs';
import stringWidth from 'string-width';

const PASTE_ON = '\x1b[?2004h';
const PASTE_OFF = '\x1b[?2004l';

/**
 * Turns bracketed paste on; the function returned turns it off. A process that ends without it (a second
 * signal calls `process.exit`) still writes the switch-off from its `exit` handler.
 */
export function bracketedPaste(stream: NodeJS.WritableStream): () => void {
  const fd = (stream as { fd?: unknown }).fd;
  stream.write(PASTE_ON);
  let on = true;
  const offAtExit = () => {
    if (!on) return;
    on = false;
    try {
      if (typeof fd === 'number') writeSync(fd, PASTE_OFF);
      else stream.write(PASTE_OFF);
    } catch {
      // the terminal is gone: there is nothing left to reset
    }
  };
  process.on('exit', offAtExit);
  return () => {
    process.off('exit', offAtExit);
    if (!on) return;
    on = false;
    stream.write(PASTE_OFF);
  };
}

/** The locale's charset, as the C library picks it: LC_ALL, then LC_CTYPE, then LANG. */
export function isUtf8Locale(env: NodeJS.ProcessEnv): boolean {
  return /utf-?8/i.test(env.LC_ALL || env.LC_CTYPE || env.LANG || '');
}

const SUBSTITUTES: Record<string, string> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u2013': '-',
  '\u2014': '-',
  '\u2022': '-',
  '\u2026': '...',
  '\u2192': '->',
  '\u00a0': ' ',
};

/** Text with every character outside ASCII replaced: common punctuation by its ASCII form, the rest by `?`s as wide as it. */
export function toAscii(text: string): string {
  return text.replace(/[^\x00-\x7f]/gu, (ch) => SUBSTITUTES[ch] ?? '?'.repeat(Math.max(1, stringWidth(ch))));
}

/** The same stream, writing ASCII only (for readline's echo and prompts as much as for the UI's own lines). */
export function asciiStream<T extends NodeJS.WritableStream>(stream: T): T {
  return new Proxy(stream, {
    get(target, key) {
      if (key === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (c: unknown, ...r: unknown[]) => boolean).call(target, typeof chunk === 'string' ? toAscii(chunk) : chunk, ...rest);
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
