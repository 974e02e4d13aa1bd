/** Lines typed by the user, in order, for whoever asks next (the prompt loop or a question). */
export class LineQueue {
  private lines: string[] = [];
  private waiting: ((line: string | null) => void) | null = null;
  closed = false;

  push(line: string): void {
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w(line);
    } else this.lines.push(line);
  }

  /** The oldest line typed ahead and not yet taken, taken now; undefined when none waits. */
  takeQueued(): string | undefined {
    return this.lines.shift();
  }

  close(): void {
    this.closed = true;
    this.waiting?.(null);
    this.waiting = null;
  }

  /**
   * The next line; null once input has ended, or when `signal` aborts first (the line then goes to the next
   * asker). `fresh`: only a line typed from now on (a question is never answered by a prompt typed ahead).
   */
  next(signal?: AbortSignal, fresh = false): Promise<string | null> {
    if (!fresh && this.lines.length > 0) return Promise.resolve(this.lines.shift() as string);
    if (this.closed || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const onAbort = () => {
        if (this.waiting !== done) return;
        this.waiting = null;
        resolve(null);
      };
      const done = (line: string | null) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(line);
      };
      this.waiting = done;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
