/**
 * Narrowing a terminal rewraps what is on it. Each line of the live region that no longer fits takes several
 * rows, Ink erases only as many rows as it wrote lines, and the terminal may already have pushed the rows
 * that grew into its scrollback (tmux keeps the cursor's row and pushes everything above it up), where
 * nothing can erase them: pieces of the old live region would stay on the screen and in the scrollback.
 *
 * So on a narrower width the screen and the scrollback are cleared and everything this UI printed is written
 * again (the terminal wraps it to the new width), followed by as many blank lines as the live region had: Ink's
 * own erase, which comes next, erases those, and it draws the live region below the output. Every finished
 * line is in the scrollback exactly once, as before. What Ink printed is learnt from the stream it writes to:
 * Ink erases the live region before anything else, so text that no erase followed was printed output
 * (`<Static>`, or console output Ink moved above the live region), and the last text is the live region.
 * Widening needs none of this: lines that fitted still fit, each on one row, and Ink redraws in place.
 */

// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;

const ERASE_LINE = '\x1b[2K';

/** Whether the control sequences before a write's first text erase a line. */
function erasesFirst(chunk: string): boolean {
  const lead = /^(?:\x1b\[[0-9;?<=>]*[ -/]*[@-~])*/.exec(chunk)?.[0] ?? '';
  return lead.includes(ERASE_LINE);
}

export class OutputLog {
  /** Every write of printed output, as written. */
  private printed: string[] = [];
  /** The latest write with text: the live region, until another write with text follows it. */
  private last: string | null = null;
  /** Whether a line was erased since `last` was written. */
  private erased = false;

  /** Sees one write to the terminal. */
  observe(chunk: unknown): void {
    if (typeof chunk !== 'string') return;
    if (!chunk.replace(CONTROL, '')) {
      if (chunk.includes(ERASE_LINE)) this.erased = true;
      return;
    }
    // Ink erases the live region (ESC [2K) before it writes output above it or draws it again: text that came
    // before a write with text, with no erase between them, was output; text that was erased was the live region.
    if (this.last !== null && !this.erased && !erasesFirst(chunk)) this.printed.push(this.last);
    this.last = chunk;
    this.erased = false;
  }

  /** The live region was erased by someone else (the reprint): it is not output. */
  forgetLive(): void {
    this.last = null;
  }

  /** Lines of the live region as last drawn. */
  get liveLines(): number {
    if (this.last === null) return 0;
    const lines = this.last.replace(CONTROL, '').split('\n');
    return lines.at(-1) === '' ? lines.length - 1 : lines.length;
  }

  /** The printed output, to write again. */
  get output(): string {
    return this.printed.join('');
  }
}

/** `stream`, with every write shown to `log` first. */
export function loggedStream(stream: NodeJS.WriteStream, log: OutputLog): NodeJS.WriteStream {
  return new Proxy(stream, {
    get(target, key) {
      if (key === 'write') {
        return (chunk: unknown, ...rest: unknown[]) => {
          log.observe(chunk);
          return (target.write as (c: unknown, ...r: unknown[]) => boolean).call(target, chunk, ...rest);
        };
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Writes the output again when the terminal gets narrower. It must listen before Ink does (it is registered
 * before `render`), so it runs first; it writes to `terminal`, the stream under the logged one. Returns the
 * function that stops it.
 */
export function reprintOnNarrowing(terminal: NodeJS.WriteStream, log: OutputLog): () => void {
  let columns = terminal.columns || 80;
  const onResize = () => {
    const now = terminal.columns || 80;
    const before = columns;
    columns = now;
    if (now >= before || log.liveLines === 0) return;
    // Clear the screen and the scrollback, home, the output, and blank rows where the live region was.
    terminal.write(`\x1b[2J\x1b[3J\x1b[H${log.output}${'\n'.repeat(log.liveLines)}`);
    log.forgetLive();
  };
  terminal.on('resize', onResize);
  return () => {
    terminal.off('resize', onResize);
  };
}
