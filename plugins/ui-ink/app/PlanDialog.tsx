/**
 * Approving a plan (`exit_plan_mode` asks through `askUser` with the plan as its preview). The plan itself is
 * printed into the scrollback, rendered as markdown, when the call starts (transcript.ts), so a plan of any
 * length can be read in full; the dialog asks: start it (the mode becomes edits), keep planning, or keep planning with
 * feedback typed here. Arrows and Enter, 1-3, y / n; Esc keeps planning.
 */
import React, { useRef, useState } from 'react';
import { Box, Text } from 'ink';
import type { Answer, Question } from '../../../kernel/index.js';
import type { Glyphs } from '../glyphs.js';
import { useKeys } from './useKeys.js';
import { TypeaheadHint } from './TypeaheadHint.js';

export interface PlanDialogProps {
  question: Extract<Question, { kind: 'permission' }>;
  waiting: number;
  glyphs: Glyphs;
  width: number;
  onAnswer(answer: Answer): void;
}

const ROWS = ['Yes, carry it out (switches to edits mode: file edits run without asking)', 'No, keep planning', 'No, and tell the model what to change:'];

/** Whether a permission question is a plan waiting for approval. */
export function isPlanApproval(question: Extract<Question, { kind: 'permission' }>): boolean {
  return question.call.name === 'exit_plan_mode';
}

export function PlanDialog(props: PlanDialogProps): React.ReactElement {
  const { glyphs } = props;
  const live = useRef({ row: 0, feedback: '' });
  const [state, setState] = useState(live.current);
  const set = (patch: Partial<typeof live.current>) => {
    live.current = { ...live.current, ...patch };
    setState(live.current);
  };
  const approve = () => props.onAnswer({ kind: 'permission', choice: 'allow_once' });
  const keepPlanning = (message?: string) => props.onAnswer({ kind: 'permission', choice: 'deny', ...(message ? { message } : {}) });
  const type = (text: string) => set({ row: 2, feedback: live.current.feedback + text.replace(/[\r\n\t]+/g, ' ') });

  const dropped = useKeys(
    (input, key) => {
      const { row, feedback } = live.current;
      if (key.escape && input === '') return keepPlanning();
      if (key.upArrow) return set({ row: (row + ROWS.length - 1) % ROWS.length });
      if (key.downArrow || key.tab) return set({ row: (row + 1) % ROWS.length });
      if (key.return) {
        if (row === 0) return approve();
        if (row === 1) return keepPlanning();
        return keepPlanning(feedback.trim() || undefined);
      }
      if (row === 2) {
        if (key.backspace || key.delete) return set({ feedback: feedback.slice(0, -1) });
        if (!key.ctrl && !key.meta && input) type(input);
        return;
      }
      if (input === '1' || input === 'y' || input === 'Y') return approve();
      if (input === '2' || input === 'n' || input === 'N') return keepPlanning();
      if (input === '3') return set({ row: 2 });
      if (!key.ctrl && !key.meta && input && !key.backspace && !key.delete) type(input);
    },
    { onPaste: type, guard: true },
  );

  const ascii = glyphs.bullet === '*';
  return (
    <Box flexDirection="column" borderStyle={ascii ? 'classic' : 'round'} borderColor="magenta" paddingX={1} width={props.width}>
      <Text bold wrap="truncate-end">
        Approve the plan above?{props.waiting > 0 ? ` (${props.waiting} more waiting)` : ''}
      </Text>
      {ROWS.map((label, i) => (
        <Text key={i} color={i === state.row ? 'cyan' : undefined} wrap="truncate-end">
          {i === state.row ? glyphs.pointer : ' '} {i + 1}. {label}
          {i === 2 && state.feedback ? ` ${state.feedback}` : ''}
          {i === 2 && state.row === 2 ? <Text inverse> </Text> : null}
        </Text>
      ))}
      <TypeaheadHint dropped={dropped} />
      <Text dimColor wrap="truncate-end">
        {ascii ? 'Up/Down' : '↑↓'} or 1-3 {glyphs.dot} y start {glyphs.dot} n or Esc keep planning
      </Text>
    </Box>
  );
}
