/** The input line: multi-line editing, Emacs keys, history (Up/Down, Ctrl+R), Tab completion, bracketed paste, paste collapsing. */
import React, { useReducer, useRef } from 'react';
import { Box, Text, type Key } from 'ink';
import * as ed from '../editor.js';
import { commonPrefix, pathSuggestions, slashSuggestions, type Suggestion } from '../completion.js';
import type { Glyphs } from '../glyphs.js';
import type { PromptHistory as History } from '../services.js';
import { NO_KEY as NO_MODIFIERS } from '../keys.js';
import { Pastes } from '../paste.js';
import { useKeys } from './useKeys.js';

export interface PromptProps {
  active: boolean;
  glyphs: Glyphs;
  width: number;
  /** Rows the prompt may use, suggestions included. */
  maxRows: number;
  history: History;
  commands: Array<{ name: string; description: string }>;
  cwd: string;
  /** `shown` is the text as the prompt showed it: large pastes as their placeholders. */
  onSubmit(text: string, shown: string): void;
  onEscape(): void;
  onCtrlC(hadText: boolean): void;
  onCtrlD(): void;
  onCycleMode(): void;
  /** Ctrl+O: show the full output of collapsed tool results. */
  onExpand?(): void;
}

interface Search {
  query: string;
  match: { index: number; entry: string } | null;
}

/**
 * Everything the keys change. Kept in a ref, not React state: keys that arrive together are handled before
 * React re-renders, and each must see what the one before it left.
 */
interface Live {
  editor: ed.EditorState;
  historyAt: number | null;
  draft: string;
  search: Search | null;
  selected: number;
}

const SUGGESTIONS_SHOWN = 5;

export function Prompt(props: PromptProps): React.ReactElement {
  const { glyphs, history } = props;
  const live = useRef<Live>({ editor: ed.empty, historyAt: null, draft: '', search: null, selected: 0 });
  const pastes = useRef(new Pastes());
  const [, rerender] = useReducer((n: number) => n + 1, 0);

  const update = (patch: Partial<Live>) => {
    Object.assign(live.current, patch);
    rerender();
  };
  const edit = (editor: ed.EditorState) => update({ editor, selected: 0 });

  const suggestionsFor = (s: ed.EditorState): Suggestion[] => {
    if (live.current.search) return [];
    const w = ed.currentWord(s);
    if (w.start === 0 && w.word.startsWith('/') && !s.text.includes(' ')) return slashSuggestions(w.word, props.commands);
    if (w.word.startsWith('@')) return pathSuggestions(w.word, props.cwd);
    return [];
  };

  const submit = (text: string) => {
    const expanded = pastes.current.expand(text);
    pastes.current.clear();
    update({ editor: ed.empty, historyAt: null, selected: 0 });
    props.onSubmit(expanded, text);
  };

  const recall = (index: number | null) => {
    const text = index === null ? live.current.draft : history.entries[index];
    update({ historyAt: index, editor: { text, cursor: text.length }, selected: 0 });
  };

  const onSearchKey = (input: string, key: Key, current: Search) => {
    if (key.return) {
      update({ search: null, ...(current.match ? { editor: { text: current.match.entry, cursor: current.match.entry.length } } : {}) });
      return;
    }
    if (key.escape || (key.ctrl && (input === 'g' || input === 'c'))) return update({ search: null });
    if (key.ctrl && input === 'r') {
      const older = history.search(current.query, current.match ? current.match.index : undefined);
      return update({ search: { query: current.query, match: older ?? current.match } });
    }
    const query = key.backspace || key.delete ? current.query.slice(0, -1) : key.ctrl || key.meta ? current.query : current.query + input;
    update({ search: { query, match: query ? history.search(query) : null } });
  };

  /**
   * Typed text, or a paste. A chunk ending in one Enter is typing followed by Enter — also as `\n`: a line typed
   * before the UI put the terminal in raw mode arrives whole from the line discipline, its Enter turned into a
   * newline (ICRNL). Real pastes come bracketed (bracketed.ts), not through here.
   */
  const typed = (input: string) => {
    const state = live.current.editor;
    const text = input.replace(/\r\n?/g, '\n');
    const lines = text.split('\n');
    if (lines.length === 2 && lines[1] === '' && /[\r\n]$/.test(input)) {
      const next = ed.insert(state, lines[0]);
      if (next.text.endsWith('\\')) return edit(ed.insert(ed.backspace(next), '\n'));
      return submit(next.text);
    }
    update({ editor: ed.insert(state, text.length > 1 ? pastes.current.add(text) : text), selected: 0, historyAt: null });
  };

  const onKey = (input: string, key: Key) => {
    const { editor: state, search, selected, historyAt } = live.current;
    if (search) return onSearchKey(input, key, search);
    const word = ed.currentWord(state);
    const suggestions = suggestionsFor(state);
    if (key.ctrl && input === 'c') {
      const had = state.text.length > 0;
      edit(ed.empty);
      return props.onCtrlC(had);
    }
    if (key.ctrl && input === 'd') return state.text === '' ? props.onCtrlD() : edit(ed.deleteForward(state));
    if (key.escape && input === '') return props.onEscape();
    if (key.tab && key.shift) return props.onCycleMode();
    if (key.tab) {
      if (suggestions.length === 0) return;
      const prefix = commonPrefix(suggestions.map((s) => s.value));
      const pick = suggestions.length === 1 || prefix.length <= word.word.length ? suggestions[selected % suggestions.length].value : prefix;
      return edit(ed.replaceWord(state, word.start, pick));
    }
    if (key.return) {
      if (key.meta || key.shift) return edit(ed.insert(state, '\n'));
      if (state.text.slice(0, state.cursor).endsWith('\\')) return edit(ed.insert(ed.backspace(state), '\n'));
      const chosen = suggestions[selected % Math.max(1, suggestions.length)];
      if (chosen && word.word.startsWith('/') && chosen.label !== word.word) return submit(chosen.value.trim());
      return submit(state.text);
    }
    if (key.upArrow || key.downArrow) {
      if (suggestions.length > 1) return update({ selected: (selected + (key.upArrow ? suggestions.length - 1 : 1)) % suggestions.length });
      const moved = key.upArrow ? ed.lineUp(state) : ed.lineDown(state);
      if (moved) return edit(moved);
      if (key.upArrow) {
        if (history.entries.length === 0) return;
        if (historyAt === null) live.current.draft = state.text;
        return recall(historyAt === null ? history.entries.length - 1 : Math.max(0, historyAt - 1));
      }
      if (historyAt !== null) recall(historyAt + 1 >= history.entries.length ? null : historyAt + 1);
      return;
    }
    if (key.ctrl) {
      const edits: Record<string, (s: ed.EditorState) => ed.EditorState> = {
        a: ed.home,
        e: ed.end,
        b: ed.left,
        f: ed.right,
        k: ed.killToEnd,
        u: ed.killToStart,
        w: ed.killWordBack,
        h: ed.backspace,
      };
      if (input === 'r') return update({ search: { query: '', match: null } });
      if (input === 'o') return props.onExpand?.();
      if (input === 'j') return edit(ed.insert(state, '\n'));
      const fn = edits[input];
      if (fn) edit(fn(state));
      return;
    }
    if (key.meta && !key.escape) {
      if (input === 'b') return edit(ed.wordLeft(state));
      if (input === 'f') return edit(ed.wordRight(state));
      if (key.backspace || key.delete) return edit(ed.killWordBack(state));
    }
    if (key.backspace || key.delete) return edit(ed.backspace(state));
    if (key.leftArrow) return edit(ed.left(state));
    if (key.rightArrow) return edit(ed.right(state));
    if (key.home) return edit(ed.home(state));
    if (key.end) return edit(ed.end(state));
    if (input) typed(input);
  };

  /** A bracketed paste: inserted whole (a large one as its placeholder); its newlines never send. */
  const pasted = (text: string) => {
    if (live.current.search) return onSearchKey(text.split('\n')[0] ?? '', NO_MODIFIERS, live.current.search);
    update({ editor: ed.insert(live.current.editor, pastes.current.add(text)), selected: 0, historyAt: null });
  };

  useKeys(onKey, { isActive: props.active, onPaste: pasted });

  const rule = <Text dimColor>{glyphs.rule.repeat(Math.max(1, props.width))}</Text>;
  const { editor: state, search, selected } = live.current;
  if (search) {
    return (
      <Box flexDirection="column">
        {rule}
        <Text wrap="truncate-end">
          (reverse-i-search)`{search.query}': {search.match ? search.match.entry.split('\n')[0] : ''}
        </Text>
      </Box>
    );
  }
  const suggestions = suggestionsFor(state);
  const rowsForText = Math.max(1, props.maxRows - 1 - Math.min(SUGGESTIONS_SHOWN, suggestions.length));
  return (
    <Box flexDirection="column">
      {rule}
      {renderLines(state, glyphs, rowsForText).map((line, i) => (
        <Text key={i} wrap="truncate-end">
          {line}
        </Text>
      ))}
      {suggestions.slice(0, SUGGESTIONS_SHOWN).map((s, i) => (
        <Text key={s.label} wrap="truncate-end" color={i === selected % suggestions.length ? 'cyan' : undefined} dimColor={i !== selected % suggestions.length}>
          {'  '}
          {s.label}
          {s.hint ? `  ${s.hint}` : ''}
        </Text>
      ))}
    </Box>
  );
}

/** The text with the cursor drawn (inverse), clipped to the rows around the cursor's line. */
function renderLines(state: ed.EditorState, glyphs: Glyphs, maxRows: number): React.ReactNode[] {
  const before = state.text.slice(0, state.cursor);
  const at = state.text[state.cursor];
  const after = state.text.slice(state.cursor + 1);
  const cursorChar = at === undefined || at === '\n' ? ' ' : at;
  const rest = at === '\n' ? `\n${after}` : after;
  const beforeLines = before.split('\n');
  const afterLines = rest.split('\n');
  const cursorLine = beforeLines.length - 1;
  const textLines = [...beforeLines.slice(0, -1), null, ...afterLines.slice(1)];
  const all = textLines.map((line, i) => {
    const lead = i === 0 ? `${glyphs.prompt} ` : '  ';
    if (line !== null) return `${lead}${line}`;
    return (
      <>
        {lead}
        {beforeLines[cursorLine]}
        <Text inverse>{cursorChar}</Text>
        {afterLines[0]}
      </>
    );
  });
  if (all.length <= maxRows) return all;
  const start = Math.max(0, Math.min(cursorLine - Math.floor(maxRows / 2), all.length - maxRows));
  return all.slice(start, start + maxRows);
}
