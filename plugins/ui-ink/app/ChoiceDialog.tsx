/**
 * The model's multiple-choice questions (`ask_user_question`): one question at a time, its options with
 * their descriptions, and "Other" for the user's own words. Arrows and Enter, or a digit, choose; with
 * multi-select Space (or a digit) ticks and Enter confirms; typing writes your own answer; Left goes back a
 * question; Esc leaves every question unanswered.
 */
import React, { useRef, useState } from 'react';
import { Box, Text } from 'ink';
import type { Answer, Question } from '../../../kernel/index.js';
import { initialChoices, onOther, reduceChoices, type ChoiceAction, type ChoiceState } from '../choices.js';
import type { Glyphs } from '../glyphs.js';
import { useKeys } from './useKeys.js';
import { TypeaheadHint } from './TypeaheadHint.js';

export interface ChoiceDialogProps {
  question: Extract<Question, { kind: 'choice' }>;
  waiting: number;
  glyphs: Glyphs;
  width: number;
  maxRows: number;
  onAnswer(answer: Answer): void;
}

export function ChoiceDialog(props: ChoiceDialogProps): React.ReactElement {
  const { questions } = props.question;
  const { glyphs } = props;
  const ascii = glyphs.bullet === '*';
  // Keys sent together arrive before a re-render: each reads the state the previous one left.
  const live = useRef<ChoiceState>(initialChoices(questions));
  const [state, setState] = useState(live.current);
  const act = (action: ChoiceAction) => {
    const next = reduceChoices(live.current, questions, action);
    if (next === live.current) return;
    live.current = next;
    setState(next);
    if (next.done) props.onAnswer({ kind: 'choice', answers: next.answers });
  };

  const dropped = useKeys(
    (input, key) => {
      if (key.escape && input === '') return act({ type: 'cancel' });
      if (key.upArrow || (key.tab && key.shift)) return act({ type: 'up' });
      if (key.downArrow || key.tab) return act({ type: 'down' });
      if (key.leftArrow) return act({ type: 'back' });
      if (key.return) return act({ type: 'enter' });
      if (key.backspace || key.delete) return act({ type: 'backspace' });
      if (key.ctrl || key.meta) return;
      if (input === ' ') return act({ type: 'space' });
      if (/^[1-9]$/.test(input)) return act({ type: 'digit', n: Number(input) });
      if (input) act({ type: 'text', text: input });
    },
    { onPaste: (text) => act({ type: 'text', text }), guard: true },
  );

  const q = questions[state.index];
  const typing = onOther(state, questions);
  const own = state.other[state.index];
  // Border (2), tabs, the hint and "Other" are always shown; descriptions get their own rows when they fit.
  const questionRows = Math.ceil((q.question.length + 1) / Math.max(10, props.width - 4));
  const fixed = 2 + (questions.length > 1 ? 1 : 0) + questionRows + q.options.length + 1 + 1 + (dropped > 0 ? 1 : 0);
  const described = q.options.filter((o) => o.description).length;
  const ownRows = fixed + described <= props.maxRows;
  // On a small screen the border and the hint go, and the question keeps one row: the dialog stays shorter than it.
  const compact = fixed > props.maxRows;
  const tick = (n: number) => (q.multiSelect ? (state.ticked[state.index].includes(n) ? '[x] ' : '[ ] ') : '');
  const hint = [
    `${ascii ? 'Up/Down' : '↑↓'} move`,
    q.multiSelect ? `Space or 1-${q.options.length} tick${glyphs.dot === '-' ? ',' : ' ·'} Enter confirm` : `1-${q.options.length} or Enter choose`,
    'type your own answer',
    ...(state.index > 0 ? ['Left back'] : []),
    'Esc cancel',
  ].join(` ${glyphs.dot} `);
  return (
    <Box flexDirection="column" borderStyle={compact ? undefined : ascii ? 'classic' : 'round'} borderColor="cyan" paddingX={compact ? 0 : 1} width={props.width}>
      {questions.length > 1 || props.waiting > 0 ? (
        <Text wrap="truncate-end">
          {questions.map((item, i) => (
            <Text key={i} bold={i === state.index} color={i === state.index ? 'cyan' : undefined} dimColor={i !== state.index}>
              {i < state.index ? `${glyphs.check} ` : ''}
              {item.header}
              {i < questions.length - 1 ? `  ` : ''}
            </Text>
          ))}
          {props.waiting > 0 ? <Text dimColor> ({props.waiting} more waiting)</Text> : null}
        </Text>
      ) : null}
      <Text bold wrap={compact ? 'truncate-end' : 'wrap'}>
        {questions.length === 1 ? `${q.header}: ` : ''}
        {q.question}
      </Text>
      {q.options.map((option, n) => {
        const at = state.row === n;
        return (
          <Box key={n} flexDirection="column">
            <Text color={at ? 'cyan' : undefined} wrap="truncate-end">
              {at ? glyphs.pointer : ' '} {n + 1}. {tick(n)}
              {option.label}
              {option.description && !ownRows ? <Text dimColor>{`  ${option.description}`}</Text> : null}
            </Text>
            {option.description && ownRows ? (
              <Text dimColor wrap="truncate-end">
                {'     '}
                {option.description}
              </Text>
            ) : null}
          </Box>
        );
      })}
      <Text color={typing ? 'cyan' : undefined} wrap="truncate-end">
        {typing ? glyphs.pointer : ' '} {q.options.length + 1}. Other: {tail(own, props.width - 16, glyphs.ellipsis)}
        {typing ? <Text inverse> </Text> : own ? '' : <Text dimColor>(type your own answer)</Text>}
      </Text>
      <TypeaheadHint dropped={dropped} />
      {compact ? null : (
        <Text dimColor wrap="truncate-end">
          {hint}
        </Text>
      )}
    </Box>
  );
}

/** The end of what was typed, so the cursor stays in view. */
function tail(text: string, room: number, ellipsis: string): string {
  return text.length <= Math.max(1, room) ? text : ellipsis + text.slice(text.length - Math.max(1, room) + ellipsis.length);
}
