/**
 * Text that cannot sit in readline's one-line buffer (a pasted block, a multi-line history entry) is kept
 * here and shown in the line as a short placeholder, `[pasted 12 lines]`; the line sent is expanded back.
 */

/** A paste this long stays whole behind a placeholder even when it has no newline. */
export const LONG_PASTE_CHARS = 800;

export class Blocks {
  private stored = new Map<string, string>();
  private count = 0;

  /** The placeholder for `text`, kept until the line is sent. */
  add(text: string, source: 'pasted' | 'history'): string {
    const lines = text.split('\n').length;
    const size = lines > 1 ? `${lines} lines` : `${text.length} chars`;
    const n = ++this.count;
    const placeholder = source === 'pasted' ? `[pasted ${size}${n > 1 ? ` #${n}` : ''}]` : `[${size} from history${n > 1 ? ` #${n}` : ''}]`;
    this.stored.set(placeholder, text);
    return placeholder;
  }

  /** The line with every placeholder still in it replaced by its text; the store is emptied for the next line. */
  take(line: string): string {
    let out = line;
    for (const [placeholder, text] of this.stored) out = out.split(placeholder).join(text);
    this.stored.clear();
    this.count = 0;
    return out;
  }
}

/** What a bracketed paste becomes: its text with line ends as `\n`, less the one newline a copied line ends with. */
export function pastedText(raw: string): string {
  return raw.replace(/\r\n?/g, '\n').replace(/\n$/, '');
}

/** Whether a paste must stay whole behind a placeholder rather than be typed into the line. */
export function needsBlock(text: string): boolean {
  return text.includes('\n') || text.length >= LONG_PASTE_CHARS;
}
