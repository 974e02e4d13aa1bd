/**
 * NDJSON input: one JSON value per line; a line that is not JSON becomes an error item naming it. One line is at most
 * SDK_MAX_LINE_BYTES: a longer one is dropped as it comes (never held whole) and becomes an error item too, so a host
 * — or anything writing to Keel's stdin — that sends a line without end cannot make Keel's memory grow without bound.
 */
import { createInterface } from 'node:readline';
import { Transform, type TransformCallback } from 'node:stream';
import type { Incoming } from './driver.js';

/**
 * 32 MiB: the Anthropic Messages API's own limit for a whole request, so any turn the model could be sent — pasted
 * images as base64 included — fits in one line (the same cap as `keel acp`'s).
 */
export const SDK_MAX_LINE_BYTES = 32 * 1024 * 1024;

const NEWLINE = 0x0a;
/** Stands for a dropped line: a NUL can never start a JSON value, so no real line is mistaken for one by accident. */
const TOO_LONG = '\u0000keel:line-too-long\u0000';

/** Passes whole lines only, each at most `maxBytes` (its newline not counted); a longer one becomes TOO_LONG. */
class LineCap extends Transform {
  private parts: Buffer[] = [];
  private bytes = 0;
  private dropping = false;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback): void {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const out: Buffer[] = [];
    let start = 0;
    for (;;) {
      const newline = buffer.indexOf(NEWLINE, start);
      const end = newline === -1 ? buffer.length : newline;
      this.keep(buffer.subarray(start, end));
      if (newline === -1) break;
      out.push(this.line(), Buffer.from('\n'));
      start = newline + 1;
    }
    callback(null, out.length ? Buffer.concat(out) : undefined);
  }

  override _flush(callback: TransformCallback): void {
    callback(null, this.bytes > 0 || this.dropping ? this.line() : undefined);
  }

  private keep(part: Buffer): void {
    if (this.dropping || part.length === 0) return;
    if (this.bytes + part.length > this.maxBytes) {
      this.dropping = true;
      this.parts = [];
      this.bytes = 0;
      return;
    }
    this.parts.push(part);
    this.bytes += part.length;
  }

  private line(): Buffer {
    const line = this.dropping ? Buffer.from(TOO_LONG) : Buffer.concat(this.parts);
    this.parts = [];
    this.bytes = 0;
    this.dropping = false;
    return line;
  }
}

/** `32 MiB (33554432 bytes)`. */
const describe = (bytes: number) => `${bytes / (1024 * 1024)} MiB (${bytes} bytes)`;

export async function* readLines(stream: NodeJS.ReadableStream, label = 'stdin', maxBytes = SDK_MAX_LINE_BYTES): AsyncGenerator<Incoming> {
  const capped = new LineCap(maxBytes);
  stream.pipe(capped);
  // Input destroyed before its end (the session is over: the mode lets go of stdin) ends the lines too.
  const onClose = () => {
    if (!(stream as NodeJS.ReadableStream & { readableEnded?: boolean }).readableEnded) capped.destroy();
  };
  stream.once('close', onClose);
  const lines = createInterface({ input: capped, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const line of lines) {
      number++;
      const where = `${label} line ${number}`;
      if (line === TOO_LONG) {
        yield { where, error: `longer than ${describe(maxBytes)}, the limit for one line; skipped` };
        continue;
      }
      if (!line.trim()) continue;
      try {
        yield { where, value: JSON.parse(line) };
      } catch (err) {
        const preview = line.length > 60 ? `${line.slice(0, 60)}…` : line;
        yield { where, error: `not valid JSON (${(err as Error).message}): ${preview}` };
      }
    }
  } finally {
    stream.off('close', onClose);
    stream.unpipe(capped);
    lines.close();
  }
}
