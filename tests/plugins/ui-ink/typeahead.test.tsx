/**
 * The dialogs' type-ahead guard (plugins/ui-ink/app/typeahead.ts): keys typed for the prompt never answer a question
 * that appeared while they were being typed. Keys are timed by a clock the test moves, never by the machine's speed.
 */
import React from 'react';
import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import type { Answer, Question } from '../../../kernel/index.js';
import { ChoiceDialog } from '../../../plugins/ui-ink/app/ChoiceDialog.js';
import { KeyRouter } from '../../../plugins/ui-ink/app/keyRouter.js';
import { PermissionDialog } from '../../../plugins/ui-ink/app/PermissionDialog.js';
import { PlanDialog } from '../../../plugins/ui-ink/app/PlanDialog.js';
import { TrustDialog } from '../../../plugins/ui-ink/app/TrustDialog.js';
import { QUIET_MS, SETTLED_MS, TypeaheadGuard } from '../../../plugins/ui-ink/app/typeahead.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import { Keyboard, TestClock } from '../../helpers/ui-keys.js';

const glyphs = glyphsFor({ LANG: 'C.UTF-8' });
const paint = makePaint(false);
/** Lets Ink read what was written to its stdin and React draw the result (the clock does not move meanwhile). */
const settle = () => new Promise((r) => setTimeout(r, 20));
/** A typist's gap between two keys. */
const TYPING_GAP = 120;
const HINT = 'Keys typed before this appeared are ignored';

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup) fn();
  cleanup = [];
});

describe('the rule', () => {
  it('admits a key once the keyboard was quiet since the dialog appeared, and every key after it', () => {
    const guard = new TypeaheadGuard(1000);
    expect(guard.admit('answer', { at: 1000 + QUIET_MS, previous: 0 })).toBe(true);
    expect(guard.admit('answer', { at: 1000 + QUIET_MS + 10, previous: 1000 + QUIET_MS })).toBe(true);
    expect(guard.dropped).toBe(0);
  });

  it('drops answer keys that come too soon after the dialog appeared or after the key before, then asks for a longer quiet', () => {
    const guard = new TypeaheadGuard(1000);
    // Pressed the instant the dialog appeared, by someone who had stopped typing long before: not a reply to it.
    expect(guard.admit('answer', { at: 1050, previous: 0 })).toBe(false);
    // Typing went on through the dialog's appearance: each key follows the one before within the quiet.
    expect(guard.admit('answer', { at: 1050 + QUIET_MS + 100, previous: 1050 + QUIET_MS })).toBe(false);
    expect(guard.dropped).toBe(2);
    // After a drop, the short quiet is not enough.
    expect(guard.admit('answer', { at: 3000 + QUIET_MS, previous: 3000 })).toBe(false);
    expect(guard.admit('answer', { at: 5000 + SETTLED_MS, previous: 5000 })).toBe(true);
  });

  it('lets Esc answer (a safe answer) and arrows move at once, without arming the dialog', () => {
    const guard = new TypeaheadGuard(1000);
    expect(guard.admit('move', { at: 1010, previous: 1000 })).toBe(true);
    expect(guard.admit('safe', { at: 1020, previous: 1010 })).toBe(true);
    expect(guard.admit('answer', { at: 1030, previous: 1020 })).toBe(false);
  });
});

const BASH: Extract<Question, { kind: 'permission' }> = { kind: 'permission', call: { id: 'b1', name: 'bash', input: { command: 'rm -rf build' } }, options: ['allow_once', 'allow_session', 'deny', 'deny_session'] };
const PLAN: Extract<Question, { kind: 'permission' }> = { kind: 'permission', call: { id: 'p1', name: 'exit_plan_mode', input: { plan: '# Plan' } }, preview: '# Plan', options: ['allow_once', 'deny'] };
const CHOICE: Extract<Question, { kind: 'choice' }> = { kind: 'choice', questions: [{ question: 'Which one?', header: 'Pick', options: [{ label: 'First' }, { label: 'Second' }] }] };

/** Each dialog that asks for a decision, how it is answered by `y`/`1`, and what that answer is. */
const DIALOGS: Array<{ name: string; dialog(onAnswer: (a: unknown) => void): React.ReactElement; yes: unknown; no: unknown }> = [
  {
    name: 'permission',
    dialog: (onAnswer) => <PermissionDialog question={BASH} waiting={0} glyphs={glyphs} paint={paint} width={70} maxRows={16} onAnswer={onAnswer} />,
    yes: { kind: 'permission', choice: 'allow_once' },
    no: { kind: 'permission', choice: 'deny' },
  },
  {
    name: 'plan',
    dialog: (onAnswer) => <PlanDialog question={PLAN} waiting={0} glyphs={glyphs} width={90} onAnswer={onAnswer} />,
    yes: { kind: 'permission', choice: 'allow_once' },
    no: { kind: 'permission', choice: 'deny' },
  },
  {
    name: 'trust',
    dialog: (onAnswer) => <TrustDialog question={{ folder: '/work/app', files: ['/work/app/agent.config.ts'] }} glyphs={glyphs} onAnswer={onAnswer} />,
    yes: true,
    no: false,
  },
  {
    name: 'choice',
    dialog: (onAnswer) => <ChoiceDialog question={CHOICE} waiting={0} glyphs={glyphs} width={70} maxRows={20} onAnswer={onAnswer} />,
    yes: { kind: 'choice', answers: [['First']] },
    no: { kind: 'choice', answers: [[]] },
  },
];

/** A screen that shows `dialog` when told to, on a keyboard timed by `clock`. */
function screen(dialog: (onAnswer: (a: unknown) => void) => React.ReactElement) {
  const clock = new TestClock();
  const router = new KeyRouter(clock.now);
  const answers: unknown[] = [];
  const view = (shown: boolean) => <Keyboard router={router}>{shown ? dialog((a) => answers.push(a)) : <Text>the prompt</Text>}</Keyboard>;
  const ui = render(view(false));
  cleanup.push(() => ui.unmount());
  return {
    ui,
    clock,
    answers,
    show: async () => {
      ui.rerender(view(true));
      await settle();
    },
    /** Types `keys` one by one, `gap` ms apart on the clock. */
    type: async (keys: string[], gap = TYPING_GAP) => {
      for (const key of keys) {
        clock.advance(gap);
        ui.stdin.write(key);
        await settle();
      }
    },
  };
}

describe.each(DIALOGS)('the $name dialog', ({ dialog, yes, no }) => {
  it('takes no answer from typing that goes on across its appearance, says so, and takes one after a pause', async () => {
    const s = screen(dialog);
    await s.type(['y', 'e', 's', ' ']);
    await s.show();
    await s.type(['y', '1', '\r', ' ', 'y', 'y']);
    expect(s.answers).toEqual([]);
    expect(s.ui.lastFrame()).toContain(HINT);
    // A pause long enough to read it, then `y` (1 for the choice): answered.
    s.clock.advance(SETTLED_MS);
    s.ui.stdin.write(dialog === DIALOGS[3].dialog ? '1' : 'y');
    await settle();
    expect(s.answers).toEqual([yes]);
  });

  it('takes the first key after the quiet period from someone who waited for it, with no hint', async () => {
    const s = screen(dialog);
    await s.show();
    s.clock.advance(QUIET_MS);
    s.ui.stdin.write('\r');
    await settle();
    expect(s.answers).toEqual([yes]);
    expect(s.ui.lastFrame()).not.toContain(HINT);
  });

  it('takes Esc at once, even in the middle of typing', async () => {
    const s = screen(dialog);
    await s.type(['n', 'o', 'w']);
    await s.show();
    await s.type(['y']);
    await s.type(['\x1b'], 10);
    expect(s.answers).toEqual([no]);
  });
});

describe('keys inside one dialog', () => {
  it('arrows typed through its appearance only move the selection; a paste then is dropped; once armed, arrows then Enter act at once', async () => {
    const s = screen(DIALOGS[0].dialog);
    await s.show();
    await s.type(['\x1b[B', '\x1b[B']);
    expect(s.ui.lastFrame()).toMatch(/❯ 3\. Deny/);
    await s.type(['\x1b[200~', 'y', '\x1b[201~'], 0);
    expect(s.answers).toEqual([]);
    s.clock.advance(SETTLED_MS);
    await s.type(['\x1b[A'], 0);
    await s.type(['\r'], 30);
    expect(s.answers).toEqual([{ kind: 'permission', choice: 'allow_session' }]);
  });
});
