import { describe, expect, it } from 'vitest';
import { StreamCleaner } from '../../../plugins/ui-plain/lines.js';

/** The deltas through one cleaner, as the plain UI prints them. */
function streamed(deltas: string[]): string {
  const cleaner = new StreamCleaner();
  return deltas.map((d) => cleaner.push(d)).join('') + cleaner.flush();
}

describe("the plain UI's answer stream", () => {
  it('cleans a colour sequence or a CRLF split between deltas as one', () => {
    expect(streamed(['a \x1b', '[3', '1mred\x1b[', '0m b'])).toBe('a red b');
    expect(streamed(['line\r', '\nnext'])).toBe('line\nnext');
  });

  it('shows any other sequence split between deltas in caret notation, whole', () => {
    expect(streamed(['x\x1b[', '2Ky\x1b]52;c;', 'eA==\x07z'])).toBe('x^[[2Ky^[]52;c;eA==^Gz');
  });

  it('shows what is still held when the stream ends', () => {
    expect(streamed(['cut \x1b[3'])).toBe('cut ^[[3');
    expect(streamed(['cut \r'])).toBe('cut ^M');
  });

  it('holds back no more than a colour sequence can be', () => {
    const cleaner = new StreamCleaner();
    expect(cleaner.push(`\x1b[${'1'.repeat(40)}`)).toBe(`^[[${'1'.repeat(40)}`);
  });
});
