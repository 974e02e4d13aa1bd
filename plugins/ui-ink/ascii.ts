/**
 * Under a non-UTF-8 locale nothing but ASCII may reach the terminal. Ink itself draws a few glyphs (the `…`
 * of truncated lines, box corners), and answers carry any text, so the stream Ink writes to is wrapped: each
 * non-ASCII character becomes one ASCII character of the same width, keeping Ink's line arithmetic right.
 */
import stringWidth from 'string-width';

const SUBSTITUTES: Record<string, string> = {
  '…': '.',
  '─': '-',
  '━': '-',
  '│': '|',
  '┃': '|',
  '╭': '+',
  '╮': '+',
  '╰': '+',
  '╯': '+',
  '┌': '+',
  '┐': '+',
  '└': '+',
  '┘': '+',
  '‘': "'",
  '’': "'",
  '“': '"',
  '”': '"',
  '–': '-',
  '—': '-',
  '•': '-',
  '→': '>',
};

export function toAscii(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[^\x00-\x7f]/gu, (ch) => SUBSTITUTES[ch] ?? '?'.repeat(Math.max(1, stringWidth(ch))));
}

/** The same stream, writing ASCII only. */
export function asciiStream(stream: NodeJS.WriteStream): NodeJS.WriteStream {
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
