/**
 * The state of a choice question (`ask_user_question`) as the keys change it, without React: which question
 * is shown, which row is highlighted, which options are ticked and what was typed as the user's own answer.
 * Rows are the options, then "Other" (free text). The answer is one list per question: the labels chosen, or
 * the user's own words; a cancelled dialog leaves every list empty.
 */
import type { ChoiceQuestion } from '../../kernel/index.js';

export interface ChoiceState {
  /** The question shown. */
  index: number;
  /** The highlighted row: 0..options-1, or options.length for "Other". */
  row: number;
  /** Per question: the ticked options (multi-select). */
  ticked: number[][];
  /** Per question: the user's own words. */
  other: string[];
  /** Per question answered so far. */
  answers: string[][];
  /** Set when every question has an answer (or the dialog was cancelled). */
  done: boolean;
}

export function initialChoices(questions: ChoiceQuestion[]): ChoiceState {
  return { index: 0, row: 0, ticked: questions.map(() => []), other: questions.map(() => ''), answers: [], done: false };
}

export type ChoiceAction =
  | { type: 'up' }
  | { type: 'down' }
  | { type: 'back' }
  | { type: 'digit'; n: number }
  | { type: 'space' }
  | { type: 'enter' }
  | { type: 'text'; text: string }
  | { type: 'backspace' }
  | { type: 'cancel' };

const withAt = <T>(list: T[], i: number, value: T): T[] => list.map((v, j) => (j === i ? value : v));

export function onOther(state: ChoiceState, questions: ChoiceQuestion[]): boolean {
  return state.row === questions[state.index].options.length;
}

/** The next state after one key. */
export function reduceChoices(state: ChoiceState, questions: ChoiceQuestion[], action: ChoiceAction): ChoiceState {
  if (state.done) return state;
  const q = questions[state.index];
  const rows = q.options.length + 1;
  const i = state.index;
  const typing = onOther(state, questions);
  switch (action.type) {
    case 'up':
      return { ...state, row: (state.row + rows - 1) % rows };
    case 'down':
      return { ...state, row: (state.row + 1) % rows };
    case 'back':
      if (typing || i === 0) return state;
      return { ...state, index: i - 1, row: 0, answers: state.answers.slice(0, i - 1) };
    case 'cancel':
      return { ...state, answers: questions.map(() => []), done: true };
    case 'digit':
      if (typing) return reduceChoices(state, questions, { type: 'text', text: String(action.n) });
      if (action.n === q.options.length + 1) return { ...state, row: q.options.length };
      if (action.n < 1 || action.n > q.options.length) return state;
      if (q.multiSelect) return { ...state, row: action.n - 1, ticked: withAt(state.ticked, i, toggle(state.ticked[i], action.n - 1)) };
      return answer({ ...state, row: action.n - 1 }, questions, [q.options[action.n - 1].label]);
    case 'space':
      if (typing) return reduceChoices(state, questions, { type: 'text', text: ' ' });
      if (q.multiSelect) return { ...state, ticked: withAt(state.ticked, i, toggle(state.ticked[i], state.row)) };
      return state;
    case 'text': {
      // Typing anywhere is the user's own answer: the highlight moves to "Other".
      const text = action.text.replace(/[\r\n\t]+/g, ' ');
      if (!text) return state;
      return { ...state, row: q.options.length, other: withAt(state.other, i, state.other[i] + text) };
    }
    case 'backspace':
      if (!typing) return state;
      return { ...state, other: withAt(state.other, i, state.other[i].slice(0, -1)) };
    case 'enter': {
      const own = state.other[i].trim();
      if (q.multiSelect) {
        const picked = [...state.ticked[i]].sort((a, b) => a - b).map((n) => q.options[n].label);
        if (own) picked.push(own);
        if (picked.length === 0 && !typing) picked.push(q.options[state.row].label);
        return picked.length > 0 ? answer(state, questions, picked) : state;
      }
      if (typing) return own ? answer(state, questions, [own]) : state;
      return answer(state, questions, [q.options[state.row].label]);
    }
  }
}

function toggle(list: number[], n: number): number[] {
  return list.includes(n) ? list.filter((m) => m !== n) : [...list, n];
}

function answer(state: ChoiceState, questions: ChoiceQuestion[], picked: string[]): ChoiceState {
  const answers = [...state.answers.slice(0, state.index), picked];
  if (state.index + 1 >= questions.length) return { ...state, answers, done: true };
  return { ...state, answers, index: state.index + 1, row: 0 };
}
