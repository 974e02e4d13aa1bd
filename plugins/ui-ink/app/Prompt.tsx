/** The input line: multi-line editing, Emacs keys, history (Up/Down, Ctrl+R), Tab completion, paste collapsing. */
import React, { useMemo, useRef, useState } from 'react';
import { Box, Text, useInput, type Key } from 'ink';
import * as ed from '../editor.js';
import { commonPrefix, pathSuggestions, slashSuggestions, type Suggestion } from '../completion.js';
import type { Glyphs } from '../glyphs.js';
import type { History } from '../history.js';
import { splitKeys } from '../keys.js';
import { Pastes } from '../paste.js';

export interface PromptProps {
  active: boolean;
  glyphs: Glyphs;
  width: number;
  /** Rows the prompt may use, suggestions included. */
  maxRows: number;
  history: History;
  commands: Array<{ name: string; description: string }>;
  cwd: string;
  onSubmit(text: string): void;
  onEscape(): void;
  onCtrlC(hadText: boolean): void;
  onCtrlD(): void;
  onCycleMode(): void;
}

interface Search {
  query: string;
  match: { index: number; entry: string } | null;
}

const SUGGESTIONS_SHOWN = 5;

export function Prompt(props: PromptProps): React.ReactElement {
  const { glyphs, history } = props;
  const [state, setState] = useState<ed.EditorState>(ed.empty);
  // Several keys may arrive in one chunk: each edit reads the state the previous one left.
  const current = useRef(state);
  const [historyAt, setHistoryAt] = useState<number | null>(null);
  const draft = useRef('');
  const [search, setSearch] = useState<Search | null>(null);
  const [selected, setSelected] = useState(0);
  const pastes = useRef(new Pastes());

  const suggestionsFor = (s: ed.EditorState): Suggestion[] => {
    const w = ed.currentWord(s);
    if (search) return [];
    if (w.start === 0 && w.word.startsWith('/') && !s.text.includes(' ')) return slashSuggestions(w.word, props.commands);
    if (w.word.startsWith('@')) return pathSuggestions(w.word, props.cwd);
    return [];
  };
  const suggestions = useMemo(() => suggestionsFor(state), [state, search, props.commands, props.cwd]);

  const set = (next: ed.EditorState) => {
    current.current = next;
    setState(next);
    setSelected(0);
  };

  const submit = (text: string) => {
    const expanded = pastes.current.expand(text);
    pastes.current.clear();
    set(ed.empty);
    setHistoryAt(null);
    props.onSubmit(expanded);
  };

  const recall = (index: number | null) => {
    setHistoryAt(index);
    const text = index === null ? draft.current : history.entries[index];
    set({ text, cursor: text.length });
  };

  const onSearchKey = (input: string, key: Key, current: Search) => {
    if (key.return) {
      setSearch(null);
      if (current.match) set({ text: current.match.entry, cursor: current.match.entry.length });
      return;
    }
    if (key.escape || (key.ctrl && (input === 'g' || input === 'c'))) {
      setSearch(null);
      return;
    }
    if (key.ctrl && input === 'r') {
      const next = history.search(current.query, current.match ? current.match.index : undefined);
      setSearch({ query: current.query, match: next ?? current.match });
      return;
    }
    const query = key.backspace || key.delete ? current.query.slice(0, -1) : key.ctrl || key.meta ? current.query : current.query + input;
    setSearch({ query, match: query ? history.search(query) : null });
  };

  useInput(
    (chunk, chunkKey) => {
      for (const [input, key] of splitKeys(chunk, chunkKey)) onKey(input, key);
    },
    { isActive: props.active },
  );

  const onKey = (input: string, key: Key) => {
      const state = current.current;
      const word = ed.currentWord(state);
      const suggestions = suggestionsFor(state);
      if (search) return onSearchKey(input, key, search);
      const escape = key.escape && input === '';
      if (key.ctrl && input === 'c') {
        const had = state.text.length > 0;
        set(ed.empty);
        props.onCtrlC(had);
        return;
      }
      if (key.ctrl && input === 'd') {
        if (state.text === '') props.onCtrlD();
        else set(ed.deleteForward(state));
        return;
      }
      if (escape) {
        if (suggestions.length > 0 && state.text) set(ed.move(state, state.cursor));
        props.onEscape();
        return;
      }
      if (key.tab && key.shift) return props.onCycleMode();
      if (key.tab) {
        if (suggestions.length === 0) return;
        const values = suggestions.map((s) => s.value);
        const prefix = commonPrefix(values);
        const pick = suggestions.length === 1 || prefix.length <= word.word.length ? suggestions[selected % suggestions.length].value : prefix;
        set(ed.replaceWord(state, word.start, pick));
        return;
      }
      if (key.return) {
        if (key.meta || key.shift) return set(ed.insert(state, '\n'));
        if (state.text.slice(0, state.cursor).endsWith('\\')) return set(ed.insert(ed.backspace(state), '\n'));
        if (suggestions.length > 0 && word.word.startsWith('/') && suggestions[selected % suggestions.length].label !== word.word) {
          const chosen = suggestions[selected % suggestions.length].value.trim();
          return submit(chosen);
        }
        return submit(state.text);
      }
      if (key.upArrow || key.downArrow) {
        if (suggestions.length > 1) {
          setSelected((i) => (i + (key.upArrow ? suggestions.length - 1 : 1)) % suggestions.length);
          return;
        }
        const moved = key.upArrow ? ed.lineUp(state) : ed.lineDown(state);
        if (moved) return set(moved);
        if (key.upArrow) {
          if (history.entries.length === 0) return;
          if (historyAt === null) draft.current = state.text;
          recall(historyAt === null ? history.entries.length - 1 : Math.max(0, historyAt - 1));
        } else if (historyAt !== null) {
          recall(historyAt + 1 >= history.entries.length ? null : historyAt + 1);
        }
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
        if (input === 'r') return setSearch({ query: '', match: null });
        if (input === 'j') return set(ed.insert(state, '\n'));
        const edit = edits[input];
        if (edit) set(edit(state));
        return;
      }
      if (key.meta && !key.escape) {
        if (input === 'b') return set(ed.wordLeft(state));
        if (input === 'f') return set(ed.wordRight(state));
        if (key.backspace || key.delete) return set(ed.killWordBack(state));
      }
      if (key.backspace || key.delete) return set(ed.backspace(state));
      if (key.leftArrow) return set(ed.left(state));
      if (key.rightArrow) return set(ed.right(state));
      if (key.home) return set(ed.home(state));
      if (key.end) return set(ed.end(state));
      if (!input) return;
      typed(input);
  };

  /** Typed text, or a paste. A chunk ending in one Enter is typing followed by Enter. */
  const typed = (input: string) => {
    const state = current.current;
    const text = input.replace(/\r\n?/g, '\n');
    const lines = text.split('\n');
    if (lines.length === 2 && lines[1] === '' && input.endsWith('\r')) {
      const next = ed.insert(state, lines[0]);
      if (next.text.endsWith('\\')) return set(ed.insert(ed.backspace(next), '\n'));
      return submit(next.text);
    }
    set(ed.insert(state, text.length > 1 ? pastes.current.add(text) : text));
    if (historyAt !== null) setHistoryAt(null);
  };

  if (search) {
    return (
      <Box flexDirection="column">
        <Text dimColor>{glyphs.rule.repeat(Math.max(1, props.width))}</Text>
        <Text wrap="truncate-end">
          (reverse-i-search)`{search.query}': {search.match ? search.match.entry.split('\n')[0] : ''}
        </Text>
      </Box>
    );
  }

  const rowsForText = Math.max(1, props.maxRows - 1 - Math.min(SUGGESTIONS_SHOWN, suggestions.length));
  const lines = renderLines(state, glyphs, rowsForText);
  return (
    <Box flexDirection="column">
      <Text dimColor>{glyphs.rule.repeat(Math.max(1, props.width))}</Text>
      {lines.map((line, i) => (
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
  const all: React.ReactNode[] = [];
  const textLines = [...beforeLines.slice(0, -1), null, ...afterLines.slice(1)];
  textLines.forEach((line, i) => {
    const lead = i === 0 ? `${glyphs.prompt} ` : '  ';
    if (line === null) {
      all.push(
        <>
          {lead}
          {beforeLines[cursorLine]}
          <Text inverse>{cursorChar}</Text>
          {afterLines[0]}
        </>,
      );
    } else all.push(`${lead}${line}`);
  });
  if (all.length <= maxRows) return all;
  const start = Math.max(0, Math.min(cursorLine - Math.floor(maxRows / 2), all.length - maxRows));
  return all.slice(start, start + maxRows);
}
