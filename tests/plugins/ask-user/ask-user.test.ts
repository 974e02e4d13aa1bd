import { afterEach, describe, expect, it } from 'vitest';
import type { Answer, Plugin, Question } from '../../../kernel/index.js';
import askUser from '../../../plugins/ask-user/index.js';
import { harness, textOf, type Harness } from '../tools-fs/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

function frontend(answer: (q: Question) => Answer | undefined, asked: Question[]): Plugin {
  return { name: 'test-frontend', kernel: '^1.0.0', apply: (k) => k.hooks.askUser.tapPromise('test-frontend', async (q) => (asked.push(q), answer(q))) };
}

const QUESTIONS = {
  questions: [
    { question: 'Which database?', header: 'Database', options: [{ label: 'Postgres' }, { label: 'SQLite', description: 'a file' }] },
    { question: 'Which extras?', header: 'Extras', multiSelect: true, options: [{ label: 'Docker' }, { label: 'CI' }] },
  ],
};

describe('ask_user_question', () => {
  it('asks through askUser and returns the answers per question', async () => {
    const asked: Question[] = [];
    h = await harness([askUser(), frontend(() => ({ kind: 'choice', answers: [['SQLite'], ['Docker', 'CI']] }), asked)]);
    const result = await h.run('ask_user_question', QUESTIONS);
    expect(asked).toEqual([{ kind: 'choice', questions: QUESTIONS.questions }]);
    expect(textOf(result)).toBe('The user answered:\nWhich database?\n→ SQLite\nWhich extras?\n→ Docker, CI');
  });

  it('says the user declined when every question is left empty (Esc), and marks single skipped ones', async () => {
    h = await harness([askUser(), frontend(() => ({ kind: 'choice', answers: [[], []] }), [])]);
    const declined = await h.run('ask_user_question', QUESTIONS);
    expect(declined.isError).toBeFalsy();
    expect(textOf(declined)).toMatch(/^The user declined to answer/);
    h.cleanup();
    h = await harness([askUser(), frontend(() => ({ kind: 'choice', answers: [['Postgres'], []] }), [])]);
    expect(textOf(await h.run('ask_user_question', QUESTIONS))).toBe('The user answered:\nWhich database?\n→ Postgres\nWhich extras?\n→ (no answer)');
  });

  it('denies with an instruction to decide alone when nobody can answer (headless)', async () => {
    h = await harness([askUser()]);
    const result = await h.run('ask_user_question', QUESTIONS);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('decide yourself');
  });

  it('refuses more than four questions or fewer than two options, naming the field', () => {
    return harness([askUser()]).then((made) => {
      h = made;
      const input = made.kernel.tools.get('ask_user_question')!.input;
      const q = QUESTIONS.questions[0];
      expect(input.safeParse({ questions: [q, q, q, q, q] }).error?.issues[0].path).toEqual(['questions']);
      expect(input.safeParse({ questions: [{ ...q, options: [{ label: 'only' }] }] }).error?.issues[0].path).toEqual(['questions', 0, 'options']);
    });
  });
});
