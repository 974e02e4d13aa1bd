/** Questions for the user (`askUser`), one at a time: calls that run in parallel wait in line, never overlap. */
import type { Answer, Question } from '../../kernel/index.js';
import { visibleInside } from './safe-text.js';

interface Pending {
  question: Question;
  resolve(answer: Answer): void;
}

export class QuestionQueue {
  private queue: Pending[] = [];
  private listeners = new Set<() => void>();

  ask(question: Question): Promise<Answer> {
    return new Promise((resolve) => {
      // What the dialogs show: the call's command, the diff, the model's questions, never obeyed as terminal controls.
      this.queue.push({ question: visibleInside(question), resolve });
      this.notify();
    });
  }

  get current(): Question | null {
    return this.queue[0]?.question ?? null;
  }

  get waiting(): number {
    return Math.max(0, this.queue.length - 1);
  }

  answer(answer: Answer): void {
    const head = this.queue.shift();
    head?.resolve(answer);
    this.notify();
  }

  /** Esc on an interrupted turn: every pending question is answered "deny" (or left unanswered). */
  denyAll(): void {
    while (this.queue.length > 0) this.answer(dismissal(this.queue[0].question));
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** The answer to a question the user dismissed: a denial, an empty text, or no choice for any question. */
export function dismissal(question: Question): Answer {
  if (question.kind === 'permission') return { kind: 'permission', choice: 'deny' };
  if (question.kind === 'choice') return { kind: 'choice', answers: question.questions.map(() => []) };
  return { kind: 'text', text: '' };
}
