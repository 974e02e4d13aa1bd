/**
 * Ctrl+R: an incremental reverse search of the prompt history, as bash's readline does it. Each key changes
 * the query or steps to an older match; the caller shows `view()` on the prompt's line and acts on the outcome.
 * No terminal here: keys in, a one-row view out.
 */
import type { Key } from 'node:readline';

export interface Match {
  index: number;
  entry: string;
}

/** Finds the newest entry before `before` (all entries when left out) that contains `query`. */
export type FindInHistory = (query: string, before?: number) => Match | null;

export type SearchOutcome =
  /** Still searching: show the view again. */
  | { kind: 'search' }
  /** Esc, Ctrl+G or Ctrl+C: back to the line as it was before Ctrl+R. */
  | { kind: 'cancel' }
  /**
   * The search ends with `match` (null: nothing was found, keep the line as it was). `submit`: Enter, send it;
   * otherwise it becomes the line to edit, and `replay` (a movement or editing key) is then applied to it.
   */
  | { kind: 'accept'; match: Match | null; submit: boolean; replay?: { s: string | undefined; key: Key } };

export interface SearchView {
  prompt: string;
  line: string;
  /** Where the cursor goes in `line`: at the start of the matched text. */
  cursor: number;
}

export class ReverseSearch {
  query = '';
  match: Match | null = null;
  /** The query matches nothing (older than the current match): bash's "failing" search. */
  failing = false;

  /** `previous` is the query of the last search, taken again by Ctrl+R on an empty query. */
  constructor(
    private readonly find: FindInHistory,
    private readonly previous = '',
  ) {}

  key(s: string | undefined, key: Key): SearchOutcome {
    const name = key.name ?? '';
    if (name === 'escape' || (key.ctrl && (name === 'g' || name === 'c'))) return { kind: 'cancel' };
    if ((name === 'return' || name === 'enter') && !key.meta) return { kind: 'accept', match: this.match, submit: true };
    if (key.ctrl && name === 'r') {
      this.older();
      return { kind: 'search' };
    }
    if ((name === 'backspace' && !key.meta) || (key.ctrl && name === 'h')) {
      this.setQuery([...this.query].slice(0, -1).join(''), false);
      return { kind: 'search' };
    }
    if (!key.ctrl && !key.meta && typeof s === 'string' && s.length > 0 && !/[\x00-\x1f\x7f]/.test(s)) {
      this.type(s);
      return { kind: 'search' };
    }
    // Any other key (arrows, Ctrl+A/E, Tab, Delete, ...) ends the search with the match in the line, then acts on it.
    return { kind: 'accept', match: this.match, submit: false, replay: { s, key } };
  }

  /** Adds typed (or pasted) text to the query; the search goes on from the current match. */
  type(text: string): void {
    this.setQuery(this.query + text, true);
  }

  /** Ctrl+R again: the next older entry that contains the query. */
  older(): void {
    if (!this.query) {
      if (this.previous) this.setQuery(this.previous, false);
      return;
    }
    const found = this.find(this.query, this.match ? this.match.index : undefined);
    if (found) this.match = found;
    this.failing = !found;
  }

  private setQuery(query: string, fromCurrent: boolean): void {
    this.query = query;
    if (!query) {
      this.match = null;
      this.failing = false;
      return;
    }
    // A longer query may still match the entry shown; a shorter one starts again from the newest.
    const found = this.find(query, fromCurrent && this.match ? this.match.index + 1 : undefined);
    if (found) this.match = found;
    this.failing = !found;
  }

  /** The prompt and the matched entry cut to one row of `columns`, so redrawing never touches another row. */
  view(columns: number): SearchView {
    const width = Math.max(20, columns) - 1;
    const label = `(${this.failing ? 'failing ' : ''}reverse-i-search)'`;
    // The query takes at most half the row left after the label; the match gets the rest.
    const room = Math.max(6, Math.floor((width - label.length - 3) / 2));
    const query = this.query.length > room ? `...${this.query.slice(-(room - 3))}` : this.query;
    const prompt = `${label}${query}': `;
    if (!this.match) return { prompt, line: '', cursor: 0 };
    const { line, at } = shownLine(this.match.entry, this.query);
    return fit(prompt, line, at, this.query.length, width);
  }
}

/** The line of the entry where the query is, with a count when the entry has several lines. */
function shownLine(entry: string, query: string): { line: string; at: number } {
  const lines = entry.split('\n');
  const row = Math.max(0, lines.findIndex((l) => query !== '' && l.includes(query)));
  const line = lines.length > 1 ? `${lines[row]} [${lines.length} lines]` : lines[row];
  return { line, at: Math.max(0, query ? line.indexOf(query) : 0) };
}

/** Cuts `line` to what fits after the prompt, keeping the matched text (`length` long at `at`) in sight. */
function fit(prompt: string, line: string, at: number, length: number, width: number): SearchView {
  const room = Math.max(8, width - prompt.length);
  if (line.length <= room) return { prompt, line, cursor: at };
  // The match sits in the middle of what is shown between the two "..." marks.
  const start = Math.max(0, Math.min(at - 3 - Math.max(0, Math.floor((room - 6 - length) / 2)), line.length - room));
  const head = start > 0 ? '...' : '';
  const body = line.slice(start + head.length, start + room);
  // The closing "..." only where it leaves the match whole; on a very narrow row the line is just cut.
  const tail = start + room < line.length && at + length - start <= room - 3 ? '...' : '';
  const shown = `${head}${body.slice(0, body.length - tail.length)}${tail}`;
  return { prompt, line: shown, cursor: Math.min(shown.length, Math.max(head.length, at - start)) };
}
