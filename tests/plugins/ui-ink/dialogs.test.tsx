import React from 'react';
import { render } from 'ink-testing-library';
import { patient } from '../../helpers/ui-keys.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Answer, ChoiceQuestion, Question } from '../../../kernel/index.js';
import { ChoiceDialog } from '../../../plugins/ui-ink/app/ChoiceDialog.js';
import { PermissionDialog } from '../../../plugins/ui-ink/app/PermissionDialog.js';
import { PlanDialog } from '../../../plugins/ui-ink/app/PlanDialog.js';
import { Prompt } from '../../../plugins/ui-ink/app/Prompt.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { History, historyFile } from '../../../plugins/session-store/prompt-history.js';
import { dismissal, QuestionQueue } from '../../../plugins/ui-ink/questions.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import { makeWorkspace } from '../../helpers/workspace.js';
import { pressAndRedraw, untilFrame } from '../../helpers/ink.js';
import { until } from '../../helpers/until.js';

const glyphs = glyphsFor({ LANG: 'C.UTF-8' });
const paint = makePaint(false);
/** Lets the event loop turn once: the pieces of a paste arrive in separate reads, as from a terminal. */
const nextTurn = () => new Promise((r) => setImmediate(r));
let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup) fn();
  cleanup = [];
});

const DB: ChoiceQuestion = {
  question: 'Which database should the service use?',
  header: 'Database',
  options: [
    { label: 'Postgres', description: 'relational, runs as a server' },
    { label: 'SQLite', description: 'one file, no server' },
  ],
};
const FEATURES: ChoiceQuestion = {
  question: 'Which features do you want?',
  header: 'Features',
  multiSelect: true,
  options: [{ label: 'Auth' }, { label: 'Search' }, { label: 'Billing' }],
};

function choice(questions: ChoiceQuestion[], opts: { maxRows?: number; waiting?: number } = {}) {
  const answers: Answer[] = [];
  const q: Extract<Question, { kind: 'choice' }> = { kind: 'choice', questions };
  const ui = render(patient(<ChoiceDialog question={q} waiting={opts.waiting ?? 0} glyphs={glyphs} width={70} maxRows={opts.maxRows ?? 20} onAnswer={(a) => answers.push(a)} />));
  cleanup.push(() => ui.unmount());
  return { ui, answers };
}

describe('the choice dialog (ask_user_question)', () => {
  it('shows the question, each option with its description, and Other', () => {
    const frame = choice([DB], { waiting: 1 }).ui.lastFrame()!;
    expect(frame).toContain('Database: Which database should the service use?');
    expect(frame).toMatch(/❯ 1\. Postgres[ │]*\n[^\n]*relational, runs as a server/);
    expect(frame).toMatch(/2\. SQLite[ │]*\n[^\n]*one file, no server/);
    expect(frame).toContain('3. Other: (type your own answer)');
    expect(frame).toContain('(1 more waiting)');
  });

  it('puts descriptions beside the labels when the rows are few', () => {
    const frame = choice([DB], { maxRows: 6 }).ui.lastFrame()!;
    expect(frame).toMatch(/1\. Postgres {2}relational/);
  });

  it('answers by digit, by arrows and Enter, one question after another', async () => {
    const { ui, answers } = choice([DB, { ...DB, header: 'Cache', question: 'And the cache?' }]);
    expect(ui.lastFrame()).toMatch(/Database\s+Cache/);
    ui.stdin.write('2');
    await untilFrame(ui, 'And the cache?');
    await pressAndRedraw(ui, '\x1b[B', 'the selection to move down');
    await pressAndRedraw(ui, '\x1b[A', 'the selection to move up');
    ui.stdin.write('\x1b[A');
    await untilFrame(ui, /❯ 3\. Other/);
    await pressAndRedraw(ui, '\x1b[B', 'the selection to wrap to the first option');
    ui.stdin.write('\r');
    await until(() => answers.length > 0, 'the answers');
    expect(answers).toEqual([{ kind: 'choice', answers: [['SQLite'], ['Postgres']] }]);
  });

  it('ticks several options with Space or digits and confirms with Enter', async () => {
    const { ui, answers } = choice([FEATURES]);
    ui.stdin.write(' ');
    await untilFrame(ui, '1. [x] Auth');
    ui.stdin.write('3');
    await untilFrame(ui, /1\. \[x\] Auth[\s\S]*2\. \[ \] Search[\s\S]*3\. \[x\] Billing/);
    ui.stdin.write('1');
    await untilFrame(ui, '1. [ ] Auth');
    ui.stdin.write('2');
    await untilFrame(ui, '2. [x] Search');
    ui.stdin.write('\r');
    await until(() => answers.length > 0, 'the answers');
    expect(answers).toEqual([{ kind: 'choice', answers: [['Search', 'Billing']] }]);
  });

  it('takes the user\'s own words, typed or pasted, and goes back a question with Left', async () => {
    const { ui, answers } = choice([DB, FEATURES]);
    ui.stdin.write('1');
    await untilFrame(ui, 'Which features');
    ui.stdin.write('\x1b[D');
    await untilFrame(ui, 'Which database');
    ui.stdin.write('Maria');
    await untilFrame(ui, 'Other: Maria');
    ui.stdin.write('\x1b[200~DB 11\nplease\x1b[201~');
    await untilFrame(ui, 'Other: MariaDB 11 please');
    expect(answers).toEqual([]);
    ui.stdin.write('\r');
    await untilFrame(ui, 'Which features');
    ui.stdin.write('2');
    await untilFrame(ui, '2. [x] Search');
    ui.stdin.write('\r');
    await until(() => answers.length > 0, 'the answers');
    expect(answers).toEqual([{ kind: 'choice', answers: [['MariaDB 11 please'], ['Search']] }]);
  });

  it('Esc leaves every question unanswered', async () => {
    const { ui, answers } = choice([DB, FEATURES]);
    ui.stdin.write('\x1b');
    await until(() => answers.length > 0, 'Esc to answer');
    expect(answers).toEqual([{ kind: 'choice', answers: [[], []] }]);
  });

  it('an interrupted turn dismisses queued choice questions with no answers', async () => {
    const queue = new QuestionQueue();
    const pending = queue.ask({ kind: 'choice', questions: [DB] });
    const other = queue.ask({ kind: 'permission', call: { id: 'c', name: 'bash', input: {} }, options: ['allow_once', 'deny'] });
    expect(queue.waiting).toBe(1);
    queue.denyAll();
    expect(await pending).toEqual({ kind: 'choice', answers: [[]] });
    expect(await other).toEqual({ kind: 'permission', choice: 'deny' });
    expect(dismissal({ kind: 'text', prompt: 'x' })).toEqual({ kind: 'text', text: '' });
  });
});

describe('the plan approval dialog (exit_plan_mode)', () => {
  function plan() {
    const answers: Answer[] = [];
    const q: Extract<Question, { kind: 'permission' }> = { kind: 'permission', call: { id: 'p1', name: 'exit_plan_mode', input: { plan: '# Plan' } }, preview: '# Plan', options: ['allow_once', 'deny'] };
    const ui = render(patient(<PlanDialog question={q} waiting={0} glyphs={glyphs} width={90} onAnswer={(a) => answers.push(a)} />));
    cleanup.push(() => ui.unmount());
    return { ui, answers };
  }

  it('offers to start, to keep planning, or to keep planning with feedback', async () => {
    const { ui, answers } = plan();
    const frame = ui.lastFrame()!;
    expect(frame).toContain('Approve the plan above?');
    expect(frame).toMatch(/1\. Yes, carry it out \(switches to edits mode[\s\S]*2\. No, keep planning[\s\S]*3\. No, and tell the model what to change:/);
    ui.stdin.write('y');
    await until(() => answers.length > 0, 'the answer to y');
    expect(answers).toEqual([{ kind: 'permission', choice: 'allow_once' }]);
  });

  it('sends typed feedback with the denial; Esc keeps planning without any', async () => {
    const first = plan();
    first.ui.stdin.write('use the existing parser');
    await untilFrame(first.ui, 'what to change: use the existing parser');
    first.ui.stdin.write('\r');
    await until(() => first.answers.length > 0, 'the feedback to be sent');
    expect(first.answers).toEqual([{ kind: 'permission', choice: 'deny', message: 'use the existing parser' }]);
    const second = plan();
    second.ui.stdin.write('\x1b');
    await until(() => second.answers.length > 0, 'Esc to answer');
    expect(second.answers).toEqual([{ kind: 'permission', choice: 'deny' }]);
  });
});

describe('bracketed paste', () => {
  function prompt() {
    const ws = makeWorkspace();
    cleanup.push(() => ws.cleanup());
    const sent: string[] = [];
    const ui = render(
      <Prompt
        active
        glyphs={glyphs}
        width={60}
        maxRows={8}
        history={new History(historyFile(ws.home, ws.dir))}
        commands={[]}
        cwd={ws.dir}
        onSubmit={(t) => sent.push(t)}
        onEscape={() => undefined}
        onCtrlC={() => undefined}
        onCtrlD={() => undefined}
        onCycleMode={() => undefined}
      />,
    );
    cleanup.push(() => ui.unmount());
    return { ui, sent };
  }

  it('a short paste with newlines is inserted as text: its newlines never send', async () => {
    const { ui, sent } = prompt();
    ui.stdin.write('\x1b[200~first\r');
    await nextTurn();
    ui.stdin.write('second\r');
    await nextTurn();
    ui.stdin.write('\r');
    await nextTurn();
    ui.stdin.write('\x1b[201~');
    const frame = await untilFrame(ui, '  second');
    expect(frame).toContain('› first');
    expect(sent).toEqual([]);
    ui.stdin.write('\r');
    await until(() => sent.length > 0, 'the prompt to be sent');
    expect(sent).toEqual(['first\nsecond\n\n']);
  });

  it('a large paste, in pieces, collapses to one placeholder and is sent whole', async () => {
    const { ui, sent } = prompt();
    const big = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    ui.stdin.write(`ask about this: \x1b[200~${big.slice(0, 50).replace(/\n/g, '\r')}`);
    await nextTurn();
    ui.stdin.write(`${big.slice(50).replace(/\n/g, '\r')}\x1b[201~`);
    await untilFrame(ui, 'ask about this: [Pasted text #1 +30 lines]');
    expect(sent).toEqual([]);
    ui.stdin.write('\r');
    await until(() => sent.length > 0, 'the prompt to be sent');
    expect(sent).toEqual([`ask about this: ${big}`]);
  });

  it('a paste never answers a permission question', async () => {
    const answers: Answer[] = [];
    const q: Extract<Question, { kind: 'permission' }> = { kind: 'permission', call: { id: 'b', name: 'bash', input: { command: 'ls' } }, options: ['allow_once', 'allow_session', 'deny', 'deny_session'] };
    const ui = render(patient(<PermissionDialog question={q} waiting={0} glyphs={glyphs} paint={paint} width={60} maxRows={14} onAnswer={(a) => answers.push(a)} />));
    cleanup.push(() => ui.unmount());
    ui.stdin.write('\x1b[200~y\x1b[201~');
    await nextTurn();
    ui.stdin.write('\x1b[200~1\r\x1b[201~');
    await nextTurn();
    // Keys reach the dialog as they are written; the key after the pastes answers, and only it.
    expect(answers).toEqual([]);
    ui.stdin.write('n');
    await until(() => answers.length > 0, 'the answer to n');
    expect(answers).toEqual([{ kind: 'permission', choice: 'deny' }]);
  });
});

describe('the choice dialog on a small screen', () => {
  it('drops the border and the hint and keeps the question to one row, so it fits the rows it has', () => {
    const four: ChoiceQuestion = { question: 'A long question that would wrap over several rows of a narrow terminal?', header: 'Pick', options: ['a', 'b', 'c', 'd'].map((label) => ({ label, description: `about ${label}` })) };
    const answers: Answer[] = [];
    const ui = render(patient(<ChoiceDialog question={{ kind: 'choice', questions: [four] }} waiting={0} glyphs={glyphs} width={40} maxRows={7} onAnswer={(a) => answers.push(a)} />));
    cleanup.push(() => ui.unmount());
    const frame = ui.lastFrame()!;
    expect(frame.split('\n').length).toBeLessThanOrEqual(7);
    expect(frame).toContain('4. d');
    expect(frame).toContain('5. Other');
  });
});
