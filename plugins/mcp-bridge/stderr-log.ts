/**
 * A stdio server's stderr log with a cap: at `maxBytes` the file is rotated (`<server>.log` becomes
 * `<server>.log.1`, replacing the previous one), at most once a minute. A server that fills a whole file
 * again within that minute is flooding: its further output is read and dropped (so it never blocks on a full
 * pipe) and the log says how many lines were dropped and when dropping began and ended.
 */
import { closeSync, fstatSync, openSync, renameSync, writeSync } from 'node:fs';

/** Least time between two rotations: a flood keeps at most two files' worth of each minute. */
const ROTATE_EVERY_MS = 60_000;

export class StderrLog {
  private fd: number | undefined;
  private size = 0;
  private rotatedAt = 0;
  private droppedLines = 0;
  private droppedBytes = 0;
  private tail = '';

  constructor(
    private readonly file: string,
    private readonly maxBytes: number,
  ) {
    this.open();
  }

  /** The last line the server wrote (cut at 300 characters), to name why a server that exited failed. */
  get lastLine(): string | undefined {
    const lines = this.tail.split('\n').map((l) => l.trim()).filter(Boolean);
    const last = lines[lines.length - 1];
    return last && (last.length > 300 ? `${last.slice(0, 297)}...` : last);
  }

  write(chunk: Buffer): void {
    this.tail = (this.tail + chunk.subarray(Math.max(0, chunk.length - 2048)).toString('utf8')).slice(-2048);
    if (this.fd === undefined) return;
    // Once dropping began it goes on until a rotation is due, so the log never holds scraps of the flood.
    if (this.droppedBytes > 0 || this.size + chunk.length > this.maxBytes) {
      if (Date.now() - this.rotatedAt < ROTATE_EVERY_MS) {
        this.drop(chunk);
        return;
      }
      this.rotate();
    }
    this.flushDropped();
    this.append(chunk);
  }

  /** Writes the count of dropped lines, if any, and closes the file. */
  close(): void {
    if (this.fd === undefined) return;
    this.flushDropped();
    closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): void {
    this.fd = openSync(this.file, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  private rotate(): void {
    this.rotatedAt = Date.now();
    try {
      closeSync(this.fd!);
      renameSync(this.file, `${this.file}.1`);
      this.open();
    } catch {
      // The folder is gone or not writable: the rest of the output is lost, the server is not stopped.
      this.fd = undefined;
      return;
    }
    this.note(`log rotated: it reached ${this.maxBytes} bytes; the earlier part is in ${this.file}.1`);
  }

  private drop(chunk: Buffer): void {
    if (this.droppedBytes === 0) this.note(`the server writes more than ${this.maxBytes} bytes a minute to stderr; dropping its output until the next rotation`);
    this.droppedBytes += chunk.length;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) this.droppedLines++;
  }

  private flushDropped(): void {
    if (this.droppedBytes === 0) return;
    this.note(`${this.droppedLines} lines (${this.droppedBytes} bytes) of stderr were dropped`);
    this.droppedLines = 0;
    this.droppedBytes = 0;
  }

  /** Keel's own lines in the log; they may pass the cap by their own few bytes. */
  note(text: string): void {
    if (this.fd === undefined) return;
    this.append(Buffer.from(`\n[keel ${new Date().toISOString()}] ${text}\n`));
  }

  private append(data: Buffer): void {
    try {
      writeSync(this.fd!, data);
      this.size += data.length;
    } catch {
      // A full disk or a removed folder must not stop the server; its output is then lost.
    }
  }
}
