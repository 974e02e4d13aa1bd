/** Large pastes are shown as a placeholder in the prompt and expanded back when the prompt is sent. */
export const PASTE_MIN_CHARS = 800;
export const PASTE_MIN_LINES = 10;

export class Pastes {
  private stored = new Map<string, string>();
  private count = 0;

  /** The text to insert: the paste itself when small, else its placeholder. */
  add(text: string): string {
    const lines = text.split('\n').length;
    if (text.length < PASTE_MIN_CHARS && lines < PASTE_MIN_LINES) return text;
    const placeholder = `[Pasted text #${++this.count} +${lines} lines]`;
    this.stored.set(placeholder, text);
    return placeholder;
  }

  expand(text: string): string {
    let out = text;
    for (const [placeholder, pasted] of this.stored) out = out.split(placeholder).join(pasted);
    return out;
  }

  clear(): void {
    this.stored.clear();
  }
}
