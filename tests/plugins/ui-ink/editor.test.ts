import { describe, expect, it } from 'vitest';
import * as ed from '../../../plugins/ui-ink/editor.js';
import { splitKeys } from '../../../plugins/ui-ink/keys.js';
import { Pastes } from '../../../plugins/ui-ink/paste.js';
import { commonPrefix, pathSuggestions, slashSuggestions } from '../../../plugins/ui-ink/completion.js';
import { toAscii } from '../../../plugins/ui-ink/ascii.js';
import { History, historyFile } from '../../../plugins/session-store/prompt-history.js';
import { makeWorkspace } from '../../helpers/workspace.js';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Key } from 'ink';

const at = (text: string, cursor = text.length): ed.EditorState => ({ text, cursor });

describe('the prompt editor', () => {
  it('inserts, deletes and moves like Emacs', () => {
    let s = ed.insert(ed.empty, 'hello world');
    s = ed.home(s);
    expect(s.cursor).toBe(0);
    s = ed.wordRight(s);
    expect(s.cursor).toBe(5);
    s = ed.killToEnd(s);
    expect(s.text).toBe('hello');
    s = ed.end(s);
    s = ed.killWordBack(s);
    expect(s).toEqual({ text: '', cursor: 0 });
    expect(ed.backspace(ed.empty)).toEqual(ed.empty);
    expect(ed.deleteForward(at('ab', 0))).toEqual({ text: 'b', cursor: 0 });
    expect(ed.killToStart(at('one\ntwo', 6))).toEqual({ text: 'one\no', cursor: 4 });
  });

  it('moves between lines of a multi-line prompt, and says when it is at the edge', () => {
    const s = at('first line\nsecond', 14);
    const up = ed.lineUp(s);
    expect(up?.cursor).toBe(3);
    expect(ed.lineUp(up!)).toBeNull();
    expect(ed.lineDown(up!)?.cursor).toBe(14);
    expect(ed.lineDown(s)).toBeNull();
  });

  it('finds the word at the cursor and replaces it', () => {
    const s = at('look at @src/ma');
    expect(ed.currentWord(s)).toEqual({ word: '@src/ma', start: 8 });
    expect(ed.replaceWord(s, 8, '@src/main.ts ').text).toBe('look at @src/main.ts ');
  });
});

describe('keys that arrive together', () => {
  const none = { ctrl: false, meta: false } as Key;
  it('splits a short chunk with control characters into keys, and keeps a long paste as text', () => {
    const keys = splitKeys('/co\t', none);
    expect(keys.map(([input, key]) => [input, key.tab])).toEqual([
      ['/co', false],
      ['', true],
    ]);
    const ctrl = splitKeys('\x15\x04', none);
    expect(ctrl.map(([input, key]) => [input, key.ctrl])).toEqual([
      ['u', true],
      ['d', true],
    ]);
    const paste = 'x'.repeat(100) + '\r' + 'y';
    expect(splitKeys(paste, none)).toEqual([[paste, none]]);
    expect(splitKeys('plain text', none)).toEqual([['plain text', none]]);
  });
});

describe('pastes', () => {
  it('collapses a large paste to a placeholder and expands it when sent', () => {
    const pastes = new Pastes();
    const big = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const shown = pastes.add(big);
    expect(shown).toBe('[Pasted text #1 +30 lines]');
    expect(pastes.add('small')).toBe('small');
    expect(pastes.expand(`see ${shown} please`)).toBe(`see ${big} please`);
  });
});

describe('completion', () => {
  it('completes slash commands and paths under the folder', () => {
    const commands = [
      { name: 'compact', description: 'c' },
      { name: 'cost', description: 'd' },
      { name: 'help', description: 'h' },
    ];
    expect(slashSuggestions('/co', commands).map((s) => s.label)).toEqual(['/compact', '/cost']);
    expect(slashSuggestions('not a command', commands)).toEqual([]);
    expect(commonPrefix(['/compact ', '/cost '])).toBe('/co');
    const ws = makeWorkspace();
    try {
      ws.write('src/main.ts', '');
      ws.write('src/math.ts', '');
      ws.write('README.md', '');
      expect(pathSuggestions('@src/ma', ws.dir).map((s) => s.value)).toEqual(['@src/main.ts ', '@src/math.ts ']);
      expect(pathSuggestions('@s', ws.dir).map((s) => s.value)).toEqual(['@src/']);
      expect(pathSuggestions('@missing/x', ws.dir)).toEqual([]);
    } finally {
      ws.cleanup();
    }
  });
});

describe('ASCII output', () => {
  it('replaces every non-ASCII character by ASCII of the same width', () => {
    expect(toAscii('╭─ a … b ─╮')).toBe('+- a . b -+');
    expect(toAscii('日本')).toBe('????');
    expect(toAscii('\x1b[31mred\x1b[39m')).toBe('\x1b[31mred\x1b[39m');
  });
});

describe('prompt history', () => {
  it('keeps entries per project under KEEL_HOME, multi-line ones too, skipping a torn line', () => {
    const ws = makeWorkspace();
    try {
      const file = historyFile(ws.home, ws.dir);
      expect(file.startsWith(path.join(ws.home, 'history'))).toBe(true);
      const history = new History(file);
      history.add('first');
      history.add('first');
      history.add('two\nlines');
      expect(new History(file).entries).toEqual(['first', 'two\nlines']);
      writeFileSync(file, `${readFileSync(file, 'utf8')}"torn`);
      expect(new History(file).entries).toEqual(['first', 'two\nlines']);
      expect(history.search('line')).toEqual({ index: 1, entry: 'two\nlines' });
      expect(history.search('first', 0)).toBeNull();
      const other = historyFile(ws.home, path.join(ws.dir, 'elsewhere'));
      mkdirSync(path.dirname(other), { recursive: true });
      expect(new History(other).entries).toEqual([]);
    } finally {
      ws.cleanup();
    }
  });
});
