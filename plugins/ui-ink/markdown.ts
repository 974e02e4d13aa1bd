/**
 * Streamed markdown, one completed line at a time: headings, emphasis, inline code, lists, quotes, rules and
 * fenced code blocks (coloured by highlight.js grammars, see highlight.ts). A line is rendered once, when its newline arrives, so
 * rendering cost per token stays flat however long the answer or the session gets.
 */
import { CodeHighlighter } from './highlight.js';
import type { Glyphs } from './glyphs.js';
import type { Paint } from './style.js';

export class MarkdownStream {
  private buffer = '';
  private fence: { marker: string; code: CodeHighlighter } | null = null;

  constructor(
    private readonly paint: Paint,
    private readonly width: () => number,
    private readonly glyphs: Glyphs,
  ) {}

  /** Adds streamed text; returns the lines it completed, rendered. */
  push(text: string): string[] {
    this.buffer += text;
    const parts = this.buffer.split('\n');
    this.buffer = parts.pop() ?? '';
    return parts.map((line) => this.renderLine(line));
  }

  /** The line still being written, rendered as it stands (shown in the live region). */
  partial(): string {
    return this.buffer ? this.renderPreview(this.buffer) : '';
  }

  /** The tail of the line in progress that fits in `maxChars` columns, rendered. */
  partialTail(maxChars: number): string {
    if (!this.buffer) return '';
    const wide = /[^\u0000-\u10ff]/.test(this.buffer);
    const room = Math.max(1, wide ? Math.floor(maxChars / 2) : maxChars);
    if (this.buffer.length <= room) return this.renderPreview(this.buffer);
    return this.glyphs.ellipsis + this.renderPreview(this.buffer.slice(this.buffer.length - room + this.glyphs.ellipsis.length));
  }

  /** Ends the message: the last line, if any. */
  end(): string[] {
    const rest = this.buffer;
    this.buffer = '';
    this.fence = null;
    return rest ? [this.renderLine(rest)] : [];
  }

  /** Forgets a line in progress (a broken stream is retried). */
  discardPartial(): void {
    this.buffer = '';
  }

  private renderPreview(line: string): string {
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

/** Inline markdown: `code`, **bold**, *italic* / _italic_, [text](url). */
export function inline(text: string, p: Paint): string {
  if (p.level === 0) return text;
  return text
    .replace(/`([^`]+)`/g, (_m, code: string) => p.cyan(code))
    .replace(/\*\*([^*]+)\*\*/g, (_m, s: string) => p.bold(s))
    .replace(/(^|[^\w*])\*([^*\s][^*]*)\*(?!\w)/g, (_m, pre: string, s: string) => pre + p.italic(s))
    .replace(/(^|\W)_([^_\s][^_]*)_(?!\w)/g, (_m, pre: string, s: string) => pre + p.italic(s))
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) => `${label} ${p.blue.underline(`(${url})`)}`);
}
