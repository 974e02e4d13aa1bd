/** `keel --resume` without an id, or `/resume`: the project's sessions, filtered as you type, newest first. */
import React, { useRef, useState } from 'react';
import { Box, Text } from 'ink';
import { useKeys } from './useKeys.js';
import type { Glyphs } from '../glyphs.js';
import { visibleControls } from '../safe-text.js';

export interface SessionChoice {
  id: string;
  lastActivity: Date;
  firstPrompt?: string;
  turns: number;
  costUsd: number;
}

export interface ResumePickerProps {
  sessions: SessionChoice[];
  glyphs: Glyphs;
  maxRows: number;
  onPick(id: string | null): void;
}

export function matches(session: SessionChoice, query: string): boolean {
  const q = query.toLowerCase();
  return session.id.toLowerCase().includes(q) || (session.firstPrompt ?? '').toLowerCase().includes(q);
}

function when(date: Date): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

export function ResumePicker(props: ResumePickerProps): React.ReactElement {
  const [query, setQueryState] = useState('');
  const [selected, setSelectedState] = useState(0);
  // Keys sent together arrive before a re-render: each reads what the previous one left.
  const live = useRef({ query: '', selected: 0 });
  const setQuery = (next: (q: string) => string) => {
    live.current.query = next(live.current.query);
    setQueryState(live.current.query);
  };
  const setSelected = (next: number | ((i: number) => number)) => {
    live.current.selected = typeof next === 'function' ? next(live.current.selected) : next;
    setSelectedState(live.current.selected);
  };
  const shown = props.sessions.filter((s) => matches(s, query));
  useKeys((input, key) => {
    const shown = props.sessions.filter((s) => matches(s, live.current.query));
    const selected = live.current.selected;
    if (key.escape && input === '') return props.onPick(null);
    if (key.return) return props.onPick(shown[selected]?.id ?? null);
    if (key.upArrow) return setSelected((i) => Math.max(0, i - 1));
    if (key.downArrow) return setSelected((i) => Math.min(shown.length - 1, i + 1));
    if (key.backspace || key.delete) {
      setQuery((q) => q.slice(0, -1));
      setSelected(0);
      return;
    }
    if (!key.ctrl && !key.meta && input) {
      setQuery((q) => q + input.replace(/[\r\n]/g, ''));
      setSelected(0);
    }
  }, {
    onPaste: (text) => {
      setQuery((q) => q + text.replace(/\s+/g, ' '));
      setSelected(0);
    },
  });
  const rows = Math.max(1, props.maxRows - 3);
  const start = Math.max(0, Math.min(selected - rows + 1, shown.length - rows));
  return (
    <Box flexDirection="column">
      <Text bold>Resume a session (type to search, Enter to pick, Esc for a new session)</Text>
      <Text>
        Search: {query}
        <Text inverse> </Text>
      </Text>
      {shown.length === 0 ? <Text dimColor>{props.sessions.length === 0 ? 'No sessions in this project yet.' : 'No session matches.'}</Text> : null}
      {shown.slice(start, start + rows).map((s, i) => (
        <Text key={s.id} color={start + i === selected ? 'cyan' : undefined} wrap="truncate-end">
          {start + i === selected ? props.glyphs.pointer : ' '} {when(s.lastActivity)} {s.id.slice(0, 8)} {String(s.turns).padStart(3)} {s.turns === 1 ? 'turn ' : 'turns'} ${s.costUsd.toFixed(2)} {visibleControls((s.firstPrompt ?? '(no prompt)').replace(/\s+/g, ' '))}
        </Text>
      ))}
    </Box>
  );
}
