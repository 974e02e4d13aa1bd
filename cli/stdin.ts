/** The CLI's standard input: whether it is a terminal, and all of it when it is not. */
import { fstatSync, readSync } from 'node:fs';
import { isatty } from 'node:tty';
import type { Io } from '../kernel/types.js';

const ownStdin = (io: Io) => io === (process as unknown as Io);

/** Whether stdin is a terminal; for the process's own, asked of fd 0 without creating the `process.stdin` stream. */
export function stdinIsTTY(io: Io): boolean {
  return ownStdin(io) ? isatty(0) : Boolean(io.stdin.isTTY);
}

/**
 * All of stdin as text. The process's own stdin, when it is a file (`< prompt.txt`) or a device such as /dev/null (a
 * CI job's `</dev/null`), is read synchronously: no stream object, no thread-pool round trip per chunk. A pipe or a
 * socket is read as a stream; with `graceMs`, one that sends nothing for that long counts as empty (`-p "…"` with an
 * open stdin that never writes must not hang).
 */
export async function readStdin(io: Io, graceMs?: number): Promise<string> {
  if (ownStdin(io)) {
    const direct = readFd0();
    if (direct !== undefined) return direct;
  }
  return readStream(io.stdin, graceMs);
}

/** fd 0 read to its end when it is a file or a device; undefined for a pipe, a socket, or a non-blocking device. */
function readFd0(): string | undefined {
  let st;
  try {
    st = fstatSync(0);
  } catch {
    return ''; // no stdin at all (closed): nothing to read
  }
  if (!st.isFile() && !st.isCharacterDevice()) return undefined;
  const chunks: Buffer[] = [];
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf);
    } catch (err) {
      if (chunks.length === 0 && (err as NodeJS.ErrnoException).code === 'EAGAIN') return undefined;
      throw err;
    }
    if (n === 0) return Buffer.concat(chunks).toString('utf8');
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
}

function readStream(stream: Io['stdin'], graceMs: number | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      if (timer) clearTimeout(timer);
      stream.removeListener('data', onData);
      stream.removeListener('end', done);
      stream.removeListener('error', reject);
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onData = (chunk: Buffer | string) => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    };
    if (graceMs !== undefined) {
      timer = setTimeout(() => {
        (stream as NodeJS.ReadableStream & { pause(): void }).pause();
        done();
      }, graceMs);
    }
    stream.on('data', onData);
    stream.once('end', done);
    stream.once('error', reject);
  });
}
