/** First start in an untrusted folder: what would run, and yes/no (yes is remembered by the CLI). */
import React, { useRef, useState } from 'react';
import { Box, Text } from 'ink';
import { useKeys } from './useKeys.js';
import type { TrustQuestion } from '../../../kernel/index.js';
import type { Glyphs } from '../glyphs.js';

export function TrustDialog(props: { question: TrustQuestion; glyphs: Glyphs; onAnswer(yes: boolean): void }): React.ReactElement {
  const [selected, setSelectedState] = useState(0);
  const current = useRef(0);
  const setSelected = (next: (i: number) => number) => {
    current.current = next(current.current);
    setSelectedState(current.current);
  };
  useKeys((input, key) => {
    if (key.upArrow || key.downArrow || key.tab) return setSelected((i) => 1 - i);
    if (key.return) return props.onAnswer(current.current === 0);
    if (input === 'y' || input === 'Y' || input === '1') return props.onAnswer(true);
    if (input === 'n' || input === 'N' || input === '2' || (key.escape && input === '')) return props.onAnswer(false);
    if (key.ctrl && input === 'c') return props.onAnswer(false);
  });
  const options = ['Yes, trust this folder (remembered)', 'No, continue without its settings'];
  return (
    <Box flexDirection="column" borderStyle={props.glyphs.bullet === '*' ? 'classic' : 'round'} borderColor="yellow" paddingX={1}>
      <Text bold>Do you trust the files in this folder?</Text>
      <Text wrap="truncate-end">{props.question.folder}</Text>
      <Text>Trusting it lets these run or load as settings:</Text>
      {props.question.files.map((file) => (
        <Text key={file} wrap="truncate-end">
          {'  '}
          {file}
        </Text>
      ))}
      {options.map((label, i) => (
        <Text key={label} color={i === selected ? 'cyan' : undefined}>
          {i === selected ? props.glyphs.pointer : ' '} {i + 1}. {label}
        </Text>
      ))}
    </Box>
  );
}
