/**
 * Streamed markdown, one completed row at a time: headings, emphasis, inline code, lists, quotes, rules and
 * fenced code blocks (coloured by highlight.js grammars, see highlight.ts). A line is rendered once, when its
 * newline arrives, so rendering cost per token stays flat however long the answer or the session gets.
 *
 * A line longer than the terminal (a paragraph streamed as one line) is not kept whole until its newline: each
 * row it fills is handed out as soon as the text after it overflows (wrapped at a word, under the bullet or quote
 * bar it started with), so the live region only ever holds the row being written and a frame redraws that row,
 * not the whole paragraph. A row is cut only where the inline markup before it is closed (no open `code`,
 * **bold**, *italic* or [link]), so each row renders as the whole line would; a span that stays open for more
 * than MAX_OPEN_ROWS rows is cut anyway (it may then show its markers as typed). Lines of a code block are kept
 * whole: the highlighter reads them line by line.
 */
import stringWidth from 'string-width';
import { CodeHighlighter } from './highlight.js';
import type { Glyphs } from './glyphs.js';
import type { Paint } from './style.js';

/** Rows a line may hold in the live region, waiting for an open span to close, before one is cut anyway. */
const MAX_OPEN_ROWS = 4;

/** A line whose first rows were handed out: how its other rows are led and rendered. */
interface OpenLine {
  /** The first row's lead (a bullet, a quote bar), and the lead of the rows after it. */
  lead: string;
  nextLead: string;
  style(text: string): string;
  rows: number;
}

export class MarkdownStream {
  /** The source of the line in progress not handed out yet (with `open`, what follows its handed-out rows). */
  private buffer = '';
  private open: OpenLine | null = null;
  private fence: { marker: string; code: CodeHighlighter } | null = null;

  /**
   * `rows: false` keeps every line whole until its newline (a resumed conversation, printed at once: nothing is
   * redrawn meanwhile, and cutting rows would cost time on a long session for nothing).
   */
  constructor(
    private readonly paint: Paint,
    private readonly width: () => number,
    private readonly glyphs: Glyphs,
    private readonly opts: { rows?: boolean } = {},
  ) {}

  /** Adds streamed text; returns the rows it completed, rendered: whole lines, and full rows of a long one. */
  push(text: string): string[] {
    this.buffer += text;
    if (!text.includes('\n')) return this.commitRows();
    const parts = this.buffer.split('\n');
    this.buffer = parts.pop() ?? '';
    const out = parts.map((line) => this.finishLine(line));
    out.push(...this.commitRows());
    return out;
  }

  /** The line still being written, rendered as it stands (shown in the live region). */
  partial(): string {
    return this.buffer ? this.lead() + this.renderPreview(this.buffer) : '';
  }

  /** The tail of the line in progress that fits in `maxChars` columns, rendered. */
  partialTail(maxChars: number): string {
    if (!this.buffer) return '';
    const lead = this.lead();
    const wide = /[^\u0000-\u10ff]/.test(this.buffer);
    const room = Math.max(1, (wide ? Math.floor(maxChars / 2) : maxChars) - stringWidth(lead));
    if (this.buffer.length <= room) return lead + this.renderPreview(this.buffer);
    return this.glyphs.ellipsis + this.renderPreview(this.buffer.slice(this.buffer.length - room + this.glyphs.ellipsis.length));
  }

  /** Ends the message: the last line, if any. */
  end(): string[] {
    const rest = this.buffer;
    const open = this.open;
    const lead = this.lead();
    this.buffer = '';
    this.open = null;
    this.fence = null;
    if (open) return rest ? [lead + open.style(rest)] : [];
    return rest ? [this.renderLine(rest)] : [];
  }

  /**
   * Forgets the message so far (a broken stream is withdrawn and retried from its start): the line in progress,
   * and the code block it may have opened, which the retried answer is not in.
   */
  discardPartial(): void {
    this.buffer = '';
    this.open = null;
    this.fence = null;
  }

  private lead(): string {
    if (!this.open) return '';
    return this.open.rows === 0 ? this.open.lead : this.open.nextLead;
  }

  private finishLine(line: string): string {
    const open = this.open;
    if (!open) return this.renderLine(line);
    const lead = this.lead();
    this.open = null;
    return lead + open.style(line);
  }

  /** Full rows of the line in progress, handed out once the text after them overflows the row. */
  private commitRows(): string[] {
    if (this.fence || this.opts.rows === false) return [];
    const width = Math.max(10, this.width());
    if (!this.open) {
      // The source is never narrower than its rendering (markup only takes columns away): a line that fits waits.
      if (stringWidth(this.buffer) <= width) return [];
      const open = this.openLine(this.buffer);
      if (!open) return [];
      this.open = open.line;
      this.buffer = open.body;
    }
    const open = this.open;
    const rows: string[] = [];
    for (;;) {
      const lead = this.lead();
      const cut = rowEnd(this.buffer, Math.max(10, width - stringWidth(lead)), open.style);
      if (cut <= 0) break;
      rows.push(lead + open.style(this.buffer.slice(0, cut)));
      open.rows++;
      this.buffer = this.buffer.slice(cut).replace(/^ +/, '');
    }
    return rows;
  }

  /** How a long line's rows are led and styled, from its start; null for lines kept whole (fences, rules). */
  private openLine(line: string): { line: OpenLine; body: string } | null {
    const p = this.paint;
    if (/^\s*(```+|~~~+)/.test(line) || /^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) return null;
    const plain = (t: string) => inline(t, p);
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const style = heading[1].length <= 2 ? (t: string) => p.bold(p.underline(inline(t, p))) : (t: string) => p.bold(inline(t, p));
      return { line: { lead: '', nextLead: '', style, rows: 0 }, body: heading[2] };
    }
    const quote = /^>\s?(.*)$/.exec(line);
    if (quote) {
      const bar = p.gray(`${this.glyphs.quote} `);
      return { line: { lead: bar, nextLead: bar, style: (t) => p.italic(inline(t, p)), rows: 0 }, body: quote[1] };
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) {
      const lead = `${bullet[1]}${this.glyphs.listBullet} `;
      return { line: { lead, nextLead: ' '.repeat(stringWidth(lead)), style: plain, rows: 0 }, body: bullet[2] };
    }
    return { line: { lead: '', nextLead: '', style: plain, rows: 0 }, body: line };
  }

  private renderPreview(line: string): string {
    if (this.open) return this.open.style(line);
    if (this.fence) return this.fence.code.preview(line);
    return inline(line, this.paint);
  }

  private renderLine(line: string): string {
    const p = this.paint;
    const fenceMatch = /^\s*(```+|~~~+)\s*([\w+#.-]*)/.exec(line);
    if (this.fence) {
      if (fenceMatch && fenceMatch[1].startsWith(this.fence.marker) && !fenceMatch[2]) {
        this.fence = null;
        return p.gray(line.trim());
      }
      return this.fence.code.line(line);
    }
    if (fenceMatch) {
      this.fence = { marker: fenceMatch[1], code: new CodeHighlighter(fenceMatch[2] ?? '', p) };
      return p.gray(line.trim());
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) return p.bold(heading[1].length <= 2 ? p.underline(inline(heading[2], p)) : inline(heading[2], p));
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) return p.gray(this.glyphs.rule.repeat(Math.min(40, Math.max(3, this.width() - 2))));
    const quote = /^>\s?(.*)$/.exec(line);
    if (quote) return p.gray(`${this.glyphs.quote} `) + p.italic(inline(quote[1], p));
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) return `${bullet[1]}${this.glyphs.listBullet} ${inline(bullet[2], p)}`;
    return inline(line, p);
  }
}

/**
 * Where the first row of `body` ends (the index of the space it is cut at), or 0 while the row is not full yet:
 * the longest run of words that fits in `room` columns, rendered, ending where the inline markup is closed.
 */
function rowEnd(whole: string, room: number, style: (text: string) => string): number {
  // The row is decided by the text near its end: a large piece of text arriving at once costs per row, not per row times its length.
  const body = whole.length > room * (MAX_OPEN_ROWS + 2) ? whole.slice(0, room * (MAX_OPEN_ROWS + 2)) : whole;
  if (stringWidth(body) <= room || stringWidth(style(body)) <= room) return 0;
  let fits = 0;
  let closed = 0;
  for (let i = body.indexOf(' '); i > 0; i = body.indexOf(' ', i + 1)) {
    if (stringWidth(style(body.slice(0, i))) > room) break;
    fits = i;
    if (markupClosed(body.slice(0, i))) closed = i;
  }
  if (closed > 0) return closed;
  const longOpen = stringWidth(body) > room * MAX_OPEN_ROWS;
  if (fits > 0) return longOpen ? fits : 0;
  // Its first word alone is longer than the row (a URL): it goes out whole once it ends, and the terminal wraps it.
  const first = body.indexOf(' ');
  return first > 0 && (markupClosed(body.slice(0, first)) || longOpen) ? first : 0;
}

/** Whether no inline span (`code`, **bold**, *italic*, _italic_, [link](url)) is left open at the end of `text`. */
export function markupClosed(text: string): boolean {
  if ((text.match(/`/g)?.length ?? 0) % 2 !== 0) return false;
  const prose = text.replace(/`[^`]*`/g, '');
  if ((prose.match(/\*\*/g)?.length ?? 0) % 2 !== 0) return false;
  if ((prose.replace(/\*\*/g, '').match(/\*/g)?.length ?? 0) % 2 !== 0) return false;
  // An underscore inside a word (snake_case) is not emphasis.
  if ((prose.match(/(?<!\w)_|_(?!\w)/g)?.length ?? 0) % 2 !== 0) return false;
  return !/\[[^\]]*$/.test(prose) && !/\]\([^)]*$/.test(prose);
}

/**
 * Inline markdown: `code`, **bold**, *italic* / _italic_, [text](url). A link's text holds no bracket: the styles
 * applied before it start with ESC [, which must not be read as a link's opening bracket.
 */
export function inline(text: string, p: Paint): string {
  if (p.level === 0) return text;
  return text
    .replace(/`([^`]+)`/g, (_m, code: string) => p.cyan(code))
    .replace(/\*\*([^*]+)\*\*/g, (_m, s: string) => p.bold(s))
    .replace(/(^|[^\w*])\*([^*\s][^*]*)\*(?!\w)/g, (_m, pre: string, s: string) => pre + p.italic(s))
    .replace(/(^|\W)_([^_\s][^_]*)_(?!\w)/g, (_m, pre: string, s: string) => pre + p.italic(s))
    .replace(/\[([^[\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) => `${label} ${p.blue.underline(`(${url})`)}`);
}
