/** A question a plugin asks in words (`askUser` with kind `text`); secret answers are not echoed. */
import React, { useRef, useState } from 'react';
import { Box, Text } from 'ink';
import { useKeys } from './useKeys.js';
import type { Answer, Question } from '../../../kernel/index.js';

export function TextQuestion(props: { question: Extract<Question, { kind: 'text' }>; onAnswer(answer: Answer): void }): React.ReactElement {
  const [text, setShown] = useState('');
  // Keys can arrive faster than renders (typed text, then Enter at once): the answer is read from the ref.
  const typed = useRef('');
  const setText = (next: (t: string) => string) => setShown((typed.current = next(typed.current)));
  useKeys((input, key) => {
    if (key.return) return props.onAnswer({ kind: 'text', text: typed.current });
    if (key.escape && input === '') return props.onAnswer({ kind: 'text', text: '' });
    if (key.backspace || key.delete) return setText((t) => t.slice(0, -1));
    if (!key.ctrl && !key.meta && input) setText((t) => t + input.replace(/[\r\n]/g, ''));
  }, { onPaste: (pasted) => setText((t) => t + pasted.replace(/[\r\n]+/g, ' ')) });
  return (
    <Box flexDirection="column">
      <Text bold>{props.question.prompt}</Text>
      <Text>
        {props.question.secret ? '*'.repeat(text.length) : text}
        <Text inverse> </Text>
      </Text>
    </Box>
  );
}
