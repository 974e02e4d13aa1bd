import { StringDecoder } from 'node:string_decoder';

/** ANSI colour and cursor sequences, which only cost tokens in a model's input. */
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07/g;

export const stripAnsi = (text: string) => text.replace(ANSI, '');

/**
 * Keeps the first and the last `limit / 2` characters of a long output, counting what it drops in between and
 * how much the command printed in all (only the kept text exists anywhere: nothing else is saved).
 */
export class CappedOutput {
  private head = '';
  private tail = '';
  private dropped = 0;
  private bytes = 0;
  private lines = 0;

  constructor(private readonly limit: number) {}

  /** Counts raw bytes as the command wrote them (before colour codes are stripped). */
  count(bytes: number): void {
    this.bytes += bytes;
  }

  push(text: string): void {
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) this.lines++;
    const half = Math.floor(this.limit / 2);
    if (this.head.length < half) {
      const take = text.slice(0, half - this.head.length);
      this.head += take;
      text = text.slice(take.length);
    }
    if (!text) return;
    this.tail += text;
    if (this.tail.length > half) {
      this.dropped += this.tail.length - half;
      this.tail = this.tail.slice(-half);
    }
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  text(): string {
    if (!this.dropped) return this.head + this.tail;
    const kept = `the command printed ${this.bytes} bytes (${this.lines} lines) in all; only the first ${this.head.length} and the last ${this.tail.length} characters are kept, and nothing else was saved`;
    return `${this.head}\n\n[... output cut: ${this.dropped} characters left out here; ${kept}. Redirect to a file and read parts of it, or filter with grep/head/tail ...]\n\n${this.tail}`;
  }
}

/** Characters of an unfinished line held back at most; a longer line is handed on in pieces. */
export const MAX_PENDING = 64 * 1024;

/**
 * Splits a byte stream into whole lines (UTF-8 safe), handing each batch of complete lines on. A line longer
 * than `MAX_PENDING` (minified JS, binary noise) goes on in pieces, so memory and copying stay bounded.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly onLines: (text: string) => void) {}

  write(chunk: Buffer): void {
    const text = this.pending + this.decoder.write(chunk);
    const cut = text.lastIndexOf('\n');
    if (cut === -1) {
      if (text.length > MAX_PENDING) {
        this.pending = '';
        this.onLines(text);
      } else {
        this.pending = text;
      }
      return;
    }
    this.pending = text.slice(cut + 1);
    this.onLines(text.slice(0, cut + 1));
  }

  end(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    if (rest) this.onLines(rest);
  }
}
