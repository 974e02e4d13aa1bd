/** The permission question: the tool, its full input (diff, command, URL), and four answers by arrows, digits or y/n. */
import React, { useRef, useState } from 'react';
import { Box, Text } from 'ink';
import { useKeys } from './useKeys.js';
import { TypeaheadHint } from './TypeaheadHint.js';
import type { Answer, PermissionChoice, Question } from '../../../kernel/index.js';
import { colorDiff, keyArgument } from '../format.js';
import type { Glyphs } from '../glyphs.js';
import type { Paint } from '../style.js';

const LABELS: Record<PermissionChoice, string> = {
  allow_once: 'Allow once',
  allow_session: 'Allow this session',
  deny: 'Deny',
  deny_session: "Deny, and don't ask again",
};

export interface PermissionDialogProps {
  question: Extract<Question, { kind: 'permission' }>;
  waiting: number;
  glyphs: Glyphs;
  paint: Paint;
  width: number;
  maxRows: number;
  onAnswer(answer: Answer): void;
}

/** What the user must see to decide: the diff for edits, the command for bash, the URL for a fetch, else the input. */
export function inputLines(question: PermissionDialogProps['question'], paint: Paint): string[] {
  const input = (question.call.input ?? {}) as Record<string, unknown>;
  if (question.preview) return colorDiff(question.preview, paint, Number.MAX_SAFE_INTEGER);
  if (question.call.name === 'bash' && typeof input.command === 'string') return input.command.split('\n').map((l) => paint.bold(l));
  if (typeof input.url === 'string') return [paint.underline(input.url)];
  return JSON.stringify(input, null, 2).split('\n');
}

export function PermissionDialog(props: PermissionDialogProps): React.ReactElement {
  const { question, glyphs, paint } = props;
  const options = question.options;
  const [selected, setSelectedState] = useState(0);
  // Keys sent together arrive before a re-render: each reads the selection the previous one left.
  const current = useRef(0);
  const setSelected = (next: (i: number) => number) => {
    current.current = next(current.current);
    setSelectedState(current.current);
  };
  const choose = (choice: PermissionChoice) => props.onAnswer({ kind: 'permission', choice });

  const dropped = useKeys((input, key) => {
    if (key.escape && input === '') return choose('deny');
    if (key.upArrow) return setSelected((i) => (i + options.length - 1) % options.length);
    if (key.downArrow || key.tab) return setSelected((i) => (i + 1) % options.length);
    if (key.return) return choose(options[current.current]);
    const digit = Number(input);
    if (Number.isInteger(digit) && digit >= 1 && digit <= options.length) return choose(options[digit - 1]);
    if (input === 'y' || input === 'Y') return choose('allow_once');
    if (input === 'n' || input === 'N') return choose('deny');
  }, { guard: true });

  // Title, reason, options, hint and the border take the rows the input may not.
  const fixed = 2 + 1 + (question.reason ? 1 : 0) + options.length + 1 + (dropped > 0 ? 1 : 0);
  const room = Math.max(1, props.maxRows - fixed);
  const lines = inputLines(question, paint);
  const shown = lines.length > room ? [...lines.slice(0, room - 1), paint.dim(`${glyphs.ellipsis} +${lines.length - room + 1} more lines`)] : lines;
  const arg = keyArgument(question.call);
  return (
    <Box flexDirection="column" borderStyle={glyphs.bullet === '*' ? 'classic' : 'round'} borderColor="yellow" paddingX={1} width={props.width}>
      <Text bold wrap="truncate-end">
        {question.call.name}
        {arg && question.call.name !== 'bash' ? `(${arg})` : ''} wants permission{props.waiting > 0 ? ` (${props.waiting} more waiting)` : ''}
      </Text>
      {question.reason ? (
        <Text dimColor wrap="truncate-end">
          {question.reason}
        </Text>
      ) : null}
      {shown.map((line, i) => (
        <Text key={i} wrap="truncate-end">
          {line}
        </Text>
      ))}
      {options.map((option, i) => (
        <Text key={option} color={i === selected ? 'cyan' : undefined} wrap="truncate-end">
          {i === selected ? glyphs.pointer : ' '} {i + 1}. {LABELS[option]}
        </Text>
      ))}
      <TypeaheadHint dropped={dropped} />
      <Text dimColor wrap="truncate-end">
        {glyphs.bullet === '*' ? 'Up/Down' : '↑↓'} or 1-{options.length} · y allow once · n or Esc deny
      </Text>
    </Box>
  );
}
