/**
 * The keys readline does not handle, taken before it sees them: Esc, Shift+Tab, the Ctrl+R search and
 * bracketed pastes. readline's own keypress listener is lifted off the input and called from here for every
 * other key, so one place decides where each key goes.
 */
import type { EventEmitter } from 'node:events';
import type { Interface, Key } from 'node:readline';
import { Blocks, needsBlock, pastedText } from './blocks.js';
import { ReverseSearch, type FindInHistory, type Match } from './search.js';

type KeyListener = (s: string | undefined, key: Key | undefined) => void;

/** readline's `line` and `cursor`, which it reads back on every redraw. */
interface EditableLine {
  line: string;
  cursor: number;
}

export interface KeyOptions {
  rl: Interface;
  input: EventEmitter;
  /** The keypress listeners the input had before readline was created (so readline's is the one added). */
  before: readonly unknown[];
  find: FindInHistory;
  columns(): number;
  /** TERM=dumb: every change of the search is a new line, nothing is redrawn. */
  dumb: boolean;
  write(text: string): void;
  onEscape(): void;
  onCycleMode(): void;
  /** Every key, before anything handles it (the questions' type-ahead guard times them). */
  onAnyKey?(): void;
}

const RETURN: Key = { name: 'return', sequence: '\r', ctrl: false, meta: false, shift: false };

export class PromptKeys {
  readonly blocks = new Blocks();
  private readonly readlineListeners: KeyListener[];
  private search: { state: ReverseSearch; prompt: string; line: string; cursor: number } | null = null;
  private lastQuery = '';
  private paste: string | null = null;

  constructor(private readonly opts: KeyOptions) {
    this.readlineListeners = opts.input.listeners('keypress').filter((l) => !opts.before.includes(l)) as KeyListener[];
    for (const l of this.readlineListeners) opts.input.off('keypress', l);
    opts.input.on('keypress', this.onKey);
  }

  dispose(): void {
    this.opts.input.off('keypress', this.onKey);
  }

  get searching(): boolean {
    return this.search !== null;
  }

  /** The line readline handed over, with its placeholders expanded. */
  take(line: string): string {
    return this.blocks.take(line);
  }

  private forward(s: string | undefined, key: Key | undefined): void {
    for (const l of this.readlineListeners) l(s, key);
  }

  private readonly onKey = (s: string | undefined, key: Key | undefined): void => {
    this.opts.onAnyKey?.();
    const name = key?.name;
    if (name === 'paste-start') {
      this.paste = '';
      return;
    }
    if (this.paste !== null) {
      if (name === 'paste-end') this.endPaste(pastedText(this.paste));
      else this.paste += s ?? key?.sequence ?? '';
      return;
    }
    if (name === 'paste-end') return;
    if (this.search && key) return this.searchKey(s, key);
    if (key?.ctrl && name === 'r') return this.startSearch();
    if (name === 'escape') return this.opts.onEscape();
    if (name === 'tab' && key?.shift) return this.opts.onCycleMode();
    this.forward(s, key);
  };

  private endPaste(text: string): void {
    this.paste = null;
    if (!text) return;
    if (this.search) {
      this.search.state.type(text.replace(/\s*\n\s*/g, ' '));
      return this.showSearch();
    }
    // Typed into the line as one string: readline splits keys, not strings, so nothing in it is a key.
    this.forward(needsBlock(text) ? this.blocks.add(text, 'pasted') : text.replace(/\t/g, ' ').replace(/[\x00-\x1f\x7f]/g, ''), undefined);
  }

  private get editable(): EditableLine {
    return this.opts.rl as unknown as EditableLine;
  }

  private startSearch(): void {
    const { line, cursor } = this.editable;
    this.search = { state: new ReverseSearch(this.opts.find, this.lastQuery), prompt: this.opts.rl.getPrompt(), line, cursor };
    this.showSearch();
  }

  private searchKey(s: string | undefined, key: Key): void {
    const search = this.search;
    if (!search) return;
    const outcome = search.state.key(s, key);
    if (outcome.kind === 'search') return this.showSearch();
    this.search = null;
    if (search.state.query) this.lastQuery = search.state.query;
    this.opts.rl.setPrompt(search.prompt);
    if (outcome.kind === 'cancel') return this.show(search.line, search.cursor);
    if (outcome.match) this.takeMatch(outcome.match, search.state.query);
    else this.show(search.line, search.cursor);
    if (outcome.submit) this.forward('\r', RETURN);
    else if (outcome.replay) this.onKey(outcome.replay.s, outcome.replay.key);
  }

  /** The match becomes the line, the cursor where the query is; an entry of several lines stays whole as a block. */
  private takeMatch(match: Match, query: string): void {
    if (match.entry.includes('\n')) {
      const placeholder = this.blocks.add(match.entry, 'history');
      return this.show(placeholder, placeholder.length);
    }
    // As bash: the cursor stays where the match is. A dumb terminal cannot show that, so there it goes to the end.
    const at = query && !this.opts.dumb ? match.entry.indexOf(query) : -1;
    this.show(match.entry, at >= 0 ? at : match.entry.length);
  }

  private showSearch(): void {
    const search = this.search;
    if (!search) return;
    const view = search.state.view(this.opts.columns());
    this.opts.rl.setPrompt(view.prompt);
    this.show(view.line, view.cursor);
  }

  /** Puts `line` in readline's buffer and redraws the prompt's line (only it). */
  private show(line: string, cursor: number): void {
    const editable = this.editable;
    editable.line = line;
    editable.cursor = cursor;
    if (this.opts.dumb) this.opts.write(`\n${this.opts.rl.getPrompt()}${line}`);
    else this.opts.rl.prompt(true);
  }
}
