import { describe, expect, it } from 'vitest';
import type { Question } from '../../../kernel/index.js';
import { LineQueue } from '../../../plugins/ui-plain/line-queue.js';
import { questionAsker } from '../../../plugins/ui-plain/questions.js';

const permission = (name: string, options: Array<'allow_once' | 'allow_session' | 'deny' | 'deny_session'>, preview?: string): Question => ({
  kind: 'permission',
  call: { id: 'toolu_1', name, input: { command: 'echo hi' } },
  options,
  preview,
});

function harness() {
  const lines = new LineQueue();
  const said: string[] = [];
  const prompts: string[] = [];
  let signal: AbortSignal | undefined;
  const ask = questionAsker({
    say: (t) => said.push(t),
    ask: (prompt, s) => {
      prompts.push(prompt);
      return lines.next(s, true);
    },
    signal: () => signal,
  });
  return { lines, said, prompts, ask, setSignal: (s: AbortSignal) => (signal = s) };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('ui-plain questions', () => {
  it('a line typed before the question is asked is not its answer', async () => {
    const h = harness();
    h.lines.push('1');
    const answer = h.ask(permission('bash', ['allow_once', 'allow_session', 'deny', 'deny_session']));
    await tick();
    h.lines.push('n');
    expect(await answer).toEqual({ kind: 'permission', choice: 'deny' });
    expect(await h.lines.next()).toBe('1');
  });

  it('interrupting the turn denies the question being asked and the ones waiting', async () => {
    const h = harness();
    const turn = new AbortController();
    h.setSignal(turn.signal);
    const first = h.ask(permission('bash', ['allow_once', 'deny']));
    const second = h.ask(permission('bash', ['allow_once', 'deny']));
    await tick();
    turn.abort();
    expect(await first).toEqual({ kind: 'permission', choice: 'deny' });
    expect(await second).toEqual({ kind: 'permission', choice: 'deny' });
    h.lines.push('later');
    expect(await h.lines.next()).toBe('later');
  });

  it('offers as many answers as the question has, and asks again after a wrong one', async () => {
    const h = harness();
    const answer = h.ask(permission('bash', ['allow_once', 'deny']));
    await tick();
    expect(h.prompts[0]).toBe('Answer [1-2, y = allow once, n = deny]: ');
    h.lines.push('4');
    await tick();
    expect(h.said.at(-1)).toBe('"4" is not an answer: type 1-2, y or n');
    h.lines.push('1');
    expect(await answer).toEqual({ kind: 'permission', choice: 'allow_once' });
  });

  it('shows a plan in full and sends the feedback of a no', async () => {
    const h = harness();
    const answer = h.ask(permission('exit_plan_mode', ['allow_once', 'deny'], '1. read\n2. \x1b[31mwrite\x1b[0m'));
    await tick();
    expect(h.said).toEqual(['[plan] The plan to approve:', '  | 1. read', '  | 2. write', '1) Yes, carry it out (edits mode)  2) No, keep planning']);
    h.lines.push('n');
    await tick();
    h.lines.push('test it first');
    expect(await answer).toEqual({ kind: 'permission', choice: 'deny', message: 'test it first' });
  });

  it('takes option numbers, several when multiSelect, or the user\'s own words', async () => {
    const h = harness();
    const answer = h.ask({
      kind: 'choice',
      questions: [
        { question: 'Which?', header: 'One', options: [{ label: 'A' }, { label: 'B' }] },
        { question: 'Which ones?', header: 'Many', options: [{ label: 'X' }, { label: 'Y' }, { label: 'Z' }], multiSelect: true },
        { question: 'Else?', header: 'Own', options: [{ label: 'P' }, { label: 'Q' }] },
      ],
    });
    for (const reply of ['2', '1, 3', 'neither of them']) {
      await tick();
      h.lines.push(reply);
    }
    expect(await answer).toEqual({ kind: 'choice', answers: [['B'], ['X', 'Z'], ['neither of them']] });
  });
});
