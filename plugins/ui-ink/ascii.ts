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
