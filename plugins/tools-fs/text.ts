/** Text decoding that remembers how a file was stored, so edits write it back the same way. */
export type Encoding = 'utf8' | 'utf8-bom' | 'utf16le' | 'utf16be';

/** Larger text files are neither read nor edited whole: page through them with grep or bash (`sed -n`). */
export const MAX_TEXT_BYTES = 32 * 1024 * 1024;

export interface DecodedText {
  text: string;
  encoding: Encoding;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
const UTF16BE_BOM = Buffer.from([0xfe, 0xff]);

/** A copy of UTF-16 bytes with each pair swapped (big-endian to little-endian and back); an odd last byte is dropped. */
function swapPairs(buf: Buffer): Buffer {
  const copy = Buffer.from(buf.subarray(0, buf.length - (buf.length % 2)));
  return copy.swap16();
}

export function decode(buf: Buffer): DecodedText {
  if (buf.subarray(0, 3).equals(UTF8_BOM)) return { text: buf.subarray(3).toString('utf8'), encoding: 'utf8-bom' };
  if (buf.subarray(0, 2).equals(UTF16LE_BOM)) return { text: buf.subarray(2).toString('utf16le'), encoding: 'utf16le' };
  if (buf.subarray(0, 2).equals(UTF16BE_BOM)) return { text: swapPairs(buf.subarray(2)).toString('utf16le'), encoding: 'utf16be' };
  return { text: buf.toString('utf8'), encoding: 'utf8' };
}

export function encode(text: string, encoding: Encoding): Buffer {
  if (encoding === 'utf8-bom') return Buffer.concat([UTF8_BOM, Buffer.from(text, 'utf8')]);
  if (encoding === 'utf16le') return Buffer.concat([UTF16LE_BOM, Buffer.from(text, 'utf16le')]);
  if (encoding === 'utf16be') return Buffer.concat([UTF16BE_BOM, swapPairs(Buffer.from(text, 'utf16le'))]);
  return Buffer.from(text, 'utf8');
}

/**
 * Why rewriting `buf` from its decoded text would change bytes the edit never named, or null when decoding and
 * encoding give back the very same bytes. Bytes that are not valid in the encoding (a Latin-1 `é`, a cut UTF-8
 * sequence, half a UTF-16 pair) decode to U+FFFD, and writing the text back would turn every one of them into it.
 */
export function lossyDecoding(buf: Buffer, decoded: DecodedText): string | null {
  if (encode(decoded.text, decoded.encoding).equals(buf)) return null;
  const name = decoded.encoding.startsWith('utf16') ? 'UTF-16' : 'UTF-8';
  return `it is not valid ${name} text (another encoding such as Latin-1, or bytes that are cut or binary)`;
}

/** A NUL byte in the first 8 KB marks a binary file (what git and ripgrep check); UTF-16 with a BOM is text. */
export function isBinary(buf: Buffer): boolean {
  if (buf.subarray(0, 2).equals(UTF16LE_BOM) || buf.subarray(0, 2).equals(UTF16BE_BOM)) return false;
  return buf.subarray(0, 8192).includes(0);
}

/** The line ending most lines use. */
export function dominantEol(text: string): '\n' | '\r\n' {
  const crlf = text.split('\r\n').length - 1;
  const lf = text.split('\n').length - 1 - crlf;
  return crlf > lf ? '\r\n' : '\n';
}

/** Splits into lines without their terminators; a final newline does not start another line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

export function cutLine(line: string, max: number): string {
  return line.length > max ? `${line.slice(0, max)}… [line cut: ${line.length} chars]` : line;
}
