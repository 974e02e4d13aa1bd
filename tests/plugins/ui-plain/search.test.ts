import type { Key } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { Blocks, needsBlock, pastedText } from '../../../plugins/ui-plain/blocks.js';
import { ReverseSearch, type Match } from '../../../plugins/ui-plain/search.js';

const entries = ['fix the parser', 'deploy the app', 'lint everything', 'deploy the docs'];

function find(query: string, before = entries.length): Match | null {
  for (let i = Math.min(before, entries.length) - 1; i >= 0; i--) if (entries[i].includes(query)) return { index: i, entry: entries[i] };
  return null;
}

const key = (name: string, extra: Partial<Key> = {}): Key => ({ name, ctrl: false, meta: false, shift: false, ...extra });
const typeInto = (search: ReverseSearch, text: string) => {
  for (const ch of text) expect(search.key(ch, key(ch))).toEqual({ kind: 'search' });
};

describe('ui-plain reverse search', () => {
  it('matches as each character is typed, and Backspace searches again from the newest', () => {
    const search = new ReverseSearch(find);
    expect(search.view(80)).toEqual({ prompt: "(reverse-i-search)'': ", line: '', cursor: 0 });
    typeInto(search, 'de');
    expect(search.view(80)).toEqual({ prompt: "(reverse-i-search)'de': ", line: 'deploy the docs', cursor: 0 });
    typeInto(search, 'ploy the a');
    expect(search.view(80).line).toBe('deploy the app');
    expect(search.view(80).cursor).toBe(0);
    search.key(undefined, key('backspace'));
    expect(search.query).toBe('deploy the ');
    expect(search.match?.entry).toBe('deploy the docs');
  });

  it('Ctrl+R steps to older matches, then fails and keeps the last match', () => {
    const search = new ReverseSearch(find);
    typeInto(search, 'deploy');
    search.key(undefined, key('r', { ctrl: true }));
    expect(search.match?.entry).toBe('deploy the app');
    expect(search.failing).toBe(false);
    search.key(undefined, key('r', { ctrl: true }));
    expect(search.failing).toBe(true);
    expect(search.view(80)).toMatchObject({ prompt: "(failing reverse-i-search)'deploy': ", line: 'deploy the app' });
  });

  it('a longer query goes on from the entry shown, as bash does', () => {
    const search = new ReverseSearch(find);
    typeInto(search, 'the');
    search.key(undefined, key('r', { ctrl: true }));
    expect(search.match?.entry).toBe('deploy the app');
    typeInto(search, ' d');
    // "the d" is only in a newer entry: failing, not a jump forward.
    expect(search.failing).toBe(true);
    expect(search.match?.entry).toBe('deploy the app');
  });

  it('Ctrl+R on an empty query takes the last search again', () => {
    const search = new ReverseSearch(find, 'lint');
    search.key(undefined, key('r', { ctrl: true }));
    expect(search.query).toBe('lint');
    expect(search.match?.entry).toBe('lint everything');
  });

  it('Enter accepts and sends, arrows and Ctrl+E accept to edit, Esc, Ctrl+G and Ctrl+C cancel', () => {
    const search = new ReverseSearch(find);
    typeInto(search, 'fix');
    const match = { index: 0, entry: 'fix the parser' };
    expect(search.key('\r', key('return'))).toEqual({ kind: 'accept', match, submit: true });
    expect(search.key(undefined, key('right'))).toMatchObject({ kind: 'accept', match, submit: false, replay: { key: { name: 'right' } } });
    expect(search.key(undefined, key('left'))).toMatchObject({ kind: 'accept', submit: false });
    expect(search.key(undefined, key('e', { ctrl: true }))).toMatchObject({ kind: 'accept', submit: false });
    expect(search.key(undefined, key('escape'))).toEqual({ kind: 'cancel' });
    expect(search.key(undefined, key('g', { ctrl: true }))).toEqual({ kind: 'cancel' });
    expect(search.key(undefined, key('c', { ctrl: true }))).toEqual({ kind: 'cancel' });
  });

  it('fits one row of a narrow terminal, keeping the match in sight', () => {
    const long = ['a long entry with many words before the needle and many more words after it, far too many for the row'];
    const search = new ReverseSearch((q) => (long[0].includes(q) ? { index: 0, entry: long[0] } : null));
    typeInto(search, 'needle');
    const view = search.view(40);
    expect(view.prompt.length + view.line.length).toBeLessThan(40);
    expect(view.line).toContain('needle');
    expect(view.line.slice(view.cursor)).toMatch(/^needle/);
  });

  it('shows the line of a multi-line entry where the query is, with the count of lines', () => {
    const multi = 'first line\nsecond has the word\nthird';
    const search = new ReverseSearch((q) => (multi.includes(q) ? { index: 0, entry: multi } : null));
    typeInto(search, 'word');
    expect(search.view(80).line).toBe('second has the word [3 lines]');
  });
});

describe('ui-plain pasted blocks', () => {
  it('keeps a block behind a placeholder and expands it once', () => {
    const blocks = new Blocks();
    const a = blocks.add('one\ntwo\nthree', 'pasted');
    const b = blocks.add('x\ny', 'pasted');
    expect(a).toBe('[pasted 3 lines]');
    expect(b).toBe('[pasted 2 lines #2]');
    expect(blocks.take(`see ${a} and ${b}`)).toBe('see one\ntwo\nthree and x\ny');
    expect(blocks.take(a)).toBe(a);
  });

  it('normalises line ends and tells blocks from one-line pastes', () => {
    expect(pastedText('a\r\nb\rc\n')).toBe('a\nb\nc');
    expect(needsBlock('one line')).toBe(false);
    expect(needsBlock('a\nb')).toBe(true);
    expect(needsBlock('x'.repeat(800))).toBe(true);
  });
});
