/**
 * ask_user_question: the model asks the user one to four multiple-choice questions through `askUser`. A run
 * that cannot ask (headless, no frontend answering) gets a denial telling the model to decide for itself.
 */
import { z } from 'zod';
import { definePlugin, defineTool, type ChoiceQuestion, type ToolResult } from '../../kernel/index.js';

const NAME = 'ask-user';

const option = z.object({
  label: z.string().min(1).max(60).describe('The choice, a few words'),
  description: z.string().optional().describe('What choosing it means'),
});

const question = z.object({
  question: z.string().min(1).describe('The full question, ending with "?"'),
  header: z.string().min(1).max(20).describe('A very short label for it (e.g. "Database")'),
  options: z.array(option).min(2).max(4),
  multiSelect: z.boolean().optional().describe('Allow several answers'),
});

const input = z.object({ questions: z.array(question).min(1).max(4) });

/** "Database: Postgres" lines, one per question. */
export function formatAnswers(questions: ChoiceQuestion[], answers: string[][]): string {
  return questions
    .map((q, i) => {
      const picked = answers[i] ?? [];
      return `${q.question}\n→ ${picked.length ? picked.join(', ') : '(no answer)'}`;
    })
    .join('\n');
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.tools.register(
      defineTool({
        name: 'ask_user_question',
        description:
          'Ask the user 1-4 multiple-choice questions (2-4 options each; the user may also answer in their own words) when a decision is theirs to make: preferences, ambiguous requirements, trade-offs. Do not ask what you can find out yourself.',
        permission: 'read',
        input,
        async execute(args, ctx): Promise<ToolResult> {
          const questions: ChoiceQuestion[] = args.questions;
          const answer = await kernel.hooks.askUser.promise({ kind: 'choice', questions }, ctx.turn);
          if (!answer) {
            return {
              content:
                'The user cannot be asked in this run (it is not interactive). Do not ask again: decide yourself, pick the most reasonable option for each question, and say which assumptions you made.',
              isError: true,
            };
          }
          if (answer.kind !== 'choice') return { content: `ask_user_question: the frontend answered a ${answer.kind} question instead of the choices asked.`, isError: true };
          // Every question left empty: the user dismissed the dialog (Esc), which is an answer of its own.
          if (questions.every((_, i) => !answer.answers[i]?.length)) {
            return {
              content: 'The user declined to answer (they dismissed the questions). Do not ask the same again: go on with your best judgement and say which assumptions you made, or ask what they want instead.',
              display: { answers: answer.answers, declined: true },
            };
          }
          return { content: `The user answered:\n${formatAnswers(questions, answer.answers)}`, display: { answers: answer.answers } };
        },
      }),
    );
  },
}));
