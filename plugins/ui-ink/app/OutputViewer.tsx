/**
 * Ctrl+O: the full output of the tool results shown collapsed ("… +N lines"), in the live region above the prompt.
 * The scrollback cannot be redrawn (it was printed through <Static>), so the collapsed lines stay as they are and
 * this view shows what they left out: the latest result first, ←→ for the others, ↑↓ and PgUp/PgDn to scroll, and
 * Esc or Ctrl+O again to go back. Closing it erases it: nothing of it is left in the scrollback.
 */
import React, { useRef, useState } from 'react';
import { Box, Text } from 'ink';
import stringWidth from 'string-width';
import { paintOutputLine } from '../format.js';
import type { Glyphs } from '../glyphs.js';
import type { Paint } from '../style.js';
import type { CollapsedOutput } from '../transcript.js';
import { useKeys } from './useKeys.js';

export interface OutputViewerProps {
  outputs: readonly CollapsedOutput[];
  glyphs: Glyphs;
  paint: Paint;
  width: number;
  /** Rows the view may take, its title and key line included. */
  maxRows: number;
  onClose(): void;
}

/** `line` cut into rows of at most `width` columns (tabs as two spaces), so the view knows how many rows it takes. */
export function hardWrap(line: string, width: number): string[] {
  const text = line.replace(/\t/g, '  ');
  if (stringWidth(text) <= width) return [text];
  const rows: string[] = [];
  let row = '';
  let used = 0;
  for (const char of text) {
    const w = stringWidth(char);
    if (used + w > width && row) {
      rows.push(row);
      row = '';
      used = 0;
    }
    row += char;
    used += w;
  }
  rows.push(row);
  return rows;
}

export function OutputViewer(props: OutputViewerProps): React.ReactElement {
  const { outputs, glyphs, paint } = props;
  const live = useRef({ index: outputs.length - 1, top: 0 });
  const [state, setState] = useState(live.current);
  const bodyRows = Math.max(1, props.maxRows - 2);
  const room = Math.max(10, props.width - 2);
  const output = outputs[Math.min(state.index, outputs.length - 1)];
  const rows = output.lines.flatMap((line) => hardWrap(line, room).map((text) => paintOutputLine(output.kind, line, paint, text)));
  const lastTop = Math.max(0, rows.length - bodyRows);

  const set = (patch: Partial<typeof live.current>) => {
    live.current = { ...live.current, ...patch };
    setState(live.current);
  };
  const scroll = (by: number) => set({ top: Math.min(lastTop, Math.max(0, live.current.top + by)) });

  useKeys((input, key) => {
    if ((key.escape && input === '') || (key.ctrl && input === 'o') || input === 'q') return props.onClose();
    if (key.upArrow || input === 'k') return scroll(-1);
    if (key.downArrow || input === 'j' || key.return) return scroll(1);
    if (key.pageUp || input === 'b') return scroll(-bodyRows);
    if (key.pageDown || input === ' ') return scroll(bodyRows);
    if (key.home || input === 'g') return set({ top: 0 });
    if (key.end || input === 'G') return set({ top: lastTop });
    if (key.leftArrow) return set({ index: Math.max(0, live.current.index - 1), top: 0 });
    if (key.rightArrow) return set({ index: Math.min(outputs.length - 1, live.current.index + 1), top: 0 });
  });

  const top = Math.min(state.top, lastTop);
  const shown = rows.slice(top, top + bodyRows);
  const position = rows.length > bodyRows ? ` ${glyphs.dot} rows ${top + 1}-${top + shown.length} of ${rows.length}` : '';
  const which = outputs.length > 1 ? ` ${glyphs.dot} ${state.index + 1}/${outputs.length}` : '';
  const arrows = glyphs.bullet === '*' ? { updown: 'Up/Down', leftright: 'Left/Right' } : { updown: '↑↓', leftright: '←→' };
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        {output.title}
        <Text dimColor>
          {' '}
          {glyphs.dot} {output.lines.length} {output.lines.length === 1 ? 'line' : 'lines'}
          {position}
          {which}
        </Text>
      </Text>
      {shown.map((row, i) => (
        <Text key={top + i} wrap="truncate-end">
          {'  '}
          {row}
        </Text>
      ))}
      <Text dimColor wrap="truncate-end">
        {arrows.updown} PgUp/PgDn scroll{outputs.length > 1 ? ` ${glyphs.dot} ${arrows.leftright} other outputs` : ''} {glyphs.dot} esc or ctrl+o back
      </Text>
    </Box>
  );
}
