/**
 * First start in an untrusted folder: what would run, and yes/no (yes is remembered by the CLI). The dialog is drawn
 * in Ink's live region and, once answered, replaced by one line saying what was decided: nothing of it stays in the
 * scrollback. Its file list is cut to the rows there are, so the dialog never outgrows the screen (a region taller
 * than the screen scrolls into the scrollback, where nothing can erase it).
 */
import React, { useEffect, useRef, useState } from 'react';
import { Box, Text } from 'ink';
import { useKeys } from './useKeys.js';
import { TypeaheadHint } from './TypeaheadHint.js';
import type { TrustQuestion } from '../../../kernel/index.js';
import type { Glyphs } from '../glyphs.js';
import { visibleControls } from '../safe-text.js';

/** Rows of the dialog besides its file list: border (2), three lines of text, two options, and one spare. */
const FRAME_ROWS = 8;

/** The dialog until it is answered, then the one line that stays; `onDone` once that line is drawn. */
export function TrustQuestionScreen(props: { question: TrustQuestion; glyphs: Glyphs; rows: number; onDone(yes: boolean): void }): React.ReactElement {
  const [answer, setAnswer] = useState<boolean | null>(null);
  useEffect(() => {
    if (answer !== null) props.onDone(answer);
  }, [answer]);
  if (answer === null) return <TrustDialog question={props.question} glyphs={props.glyphs} rows={props.rows} onAnswer={(yes) => setAnswer((was) => was ?? yes)} />;
  return (
    <Text dimColor wrap="truncate-end">
      {answer ? `Trusted ${props.question.folder}` : `Not trusted: ${props.question.folder} (its project settings are not loaded)`}
    </Text>
  );
}

export function TrustDialog(props: { question: TrustQuestion; glyphs: Glyphs; rows?: number; onAnswer(yes: boolean): void }): React.ReactElement {
  const [selected, setSelectedState] = useState(0);
  const current = useRef(0);
  const setSelected = (next: (i: number) => number) => {
    current.current = next(current.current);
    setSelectedState(current.current);
  };
  const dropped = useKeys((input, key) => {
    if (key.upArrow || key.downArrow || key.tab) return setSelected((i) => 1 - i);
    if (key.return) return props.onAnswer(current.current === 0);
    if (input === 'y' || input === 'Y' || input === '1') return props.onAnswer(true);
    if (input === 'n' || input === 'N' || input === '2' || (key.escape && input === '')) return props.onAnswer(false);
    if (key.ctrl && input === 'c') return props.onAnswer(false);
  }, { guard: true });
  const options = ['Yes, trust this folder (remembered)', 'No, continue without its settings'];
  // A hostile folder names its own files (and may sit in a folder with an odd name): shown, never obeyed.
  const files = props.question.files.map(visibleControls);
  const room = props.rows === undefined ? files.length : Math.max(1, props.rows - FRAME_ROWS - 1 - (dropped > 0 ? 1 : 0));
  const shown = files.length > room ? files.slice(0, room) : files;
  const hidden = files.length - shown.length;
  return (
    <Box flexDirection="column" borderStyle={props.glyphs.bullet === '*' ? 'classic' : 'round'} borderColor="yellow" paddingX={1}>
      <Text bold>Do you trust the files in this folder?</Text>
      <Text wrap="truncate-end">{visibleControls(props.question.folder)}</Text>
      <Text>Trusting it lets these run or load as settings:</Text>
      {shown.map((file) => (
        <Text key={file} wrap="truncate-end">
          {'  '}
          {file}
        </Text>
      ))}
      {hidden > 0 ? <Text dimColor>{`  ${props.glyphs.ellipsis} and ${hidden} more`}</Text> : null}
      {options.map((label, i) => (
        <Text key={label} color={i === selected ? 'cyan' : undefined}>
          {i === selected ? props.glyphs.pointer : ' '} {i + 1}. {label}
        </Text>
      ))}
      <TypeaheadHint dropped={dropped} />
    </Box>
  );
}
