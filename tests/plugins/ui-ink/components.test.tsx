import React from 'react';
import { render } from 'ink-testing-library';
import { patient } from '../../helpers/ui-keys.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Answer, Question } from '../../../kernel/index.js';
import { PermissionDialog } from '../../../plugins/ui-ink/app/PermissionDialog.js';
import { Prompt, type PromptProps } from '../../../plugins/ui-ink/app/Prompt.js';
import { ResumePicker } from '../../../plugins/ui-ink/app/ResumePicker.js';
import { TrustDialog, TrustQuestionScreen } from '../../../plugins/ui-ink/app/TrustDialog.js';
import { Footer, Spinner } from '../../../plugins/ui-ink/app/Status.js';
import { Transcript } from '../../../plugins/ui-ink/transcript.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { History, historyFile } from '../../../plugins/session-store/prompt-history.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { pressAndRedraw, untilFrame } from '../../helpers/ink.js';
import { until } from '../../helpers/until.js';

const glyphs = glyphsFor({ LANG: 'C.UTF-8' });
const paint = makePaint(false);
let cleanup: Array<() => void> = [];

afterEach(() => {
  for (const fn of cleanup) fn();
  cleanup = [];
});

function workspace(): Workspace {
  const ws = makeWorkspace();
  cleanup.push(() => ws.cleanup());
  return ws;
}

function prompt(overrides: Partial<PromptProps> = {}) {
  const ws = workspace();
  const sent: string[] = [];
  const events: string[] = [];
  const history = new History(historyFile(ws.home, ws.dir));
  const props: PromptProps = {
    active: true,
    glyphs,
    width: 60,
    maxRows: 8,
    history,
    commands: [
      { name: 'compact', description: 'free room' },
      { name: 'cost', description: 'show spend' },
    ],
    cwd: ws.dir,
    onSubmit: (text) => sent.push(text),
    onEscape: () => events.push('escape'),
    onCtrlC: (had) => events.push(`ctrl-c:${had}`),
    onCtrlD: () => events.push('ctrl-d'),
    onCycleMode: () => events.push('mode'),
    ...overrides,
  };
  const ui = render(<Prompt {...props} />);
  cleanup.push(() => ui.unmount());
  return { ui, sent, events, history, ws };
}

describe('the prompt', () => {
  it('sends typed text on Enter and continues a line after a backslash', async () => {
    const { ui, sent } = prompt();
    ui.stdin.write('first line\\');
    await untilFrame(ui, '› first line\\');
    ui.stdin.write('\r');
    await untilFrame(ui, (f) => f.includes('› first line') && !f.includes('first line\\'), 'the backslash turned into a new line');
    ui.stdin.write('second');
    const frame = await untilFrame(ui, '  second');
    expect(frame).toContain('› first line');
    ui.stdin.write('\r');
    await until(() => sent.length > 0, 'the prompt to be sent');
    expect(sent).toEqual(['first line\nsecond']);
  });

  it('recalls history with Up and Down, and finds an entry with Ctrl+R', async () => {
    const { ui, sent, history } = prompt();
    history.add('old request about cats');
    history.add('newest request');
    ui.stdin.write('\x1b[A');
    await untilFrame(ui, '› newest request');
    ui.stdin.write('\x1b[A');
    await untilFrame(ui, '› old request about cats');
    ui.stdin.write('\x1b[B');
    await untilFrame(ui, '› newest request');
    // Down past the newest entry: the empty draft again (the frame showed a request until now).
    ui.stdin.write('\x1b[B');
    await untilFrame(ui, (f) => !f.includes('request'), 'the empty draft');
    ui.stdin.write('\x12');
    await untilFrame(ui, 'reverse-i-search');
    ui.stdin.write('cats');
    await untilFrame(ui, "(reverse-i-search)`cats': old request about cats");
    ui.stdin.write('\r');
    await untilFrame(ui, (f) => f.includes('› old request about cats') && !f.includes('reverse-i-search'), 'the found entry in the prompt');
    ui.stdin.write('\r');
    await until(() => sent.length > 0, 'the prompt to be sent');
    expect(sent).toEqual(['old request about cats']);
  });

  it('completes slash commands with Tab and shows what they do', async () => {
    const { ui, sent } = prompt();
    ui.stdin.write('/co');
    const frame = await untilFrame(ui, '/compact  free room');
    expect(frame).toContain('/cost  show spend');
    ui.stdin.write('s');
    await untilFrame(ui, (f) => f.includes('› /cos') && !f.includes('/compact'), 'only /cost suggested');
    ui.stdin.write('\t');
    await untilFrame(ui, '› /cost');
    ui.stdin.write('\r');
    await until(() => sent.length > 0, 'the command to be sent');
    expect(sent).toEqual(['/cost ']);
  });

  it('completes @paths from the folder', async () => {
    const ws = workspace();
    ws.write('src/index.ts', '');
    const { ui } = prompt({ cwd: ws.dir });
    ui.stdin.write('read @sr');
    await untilFrame(ui, '› read @sr');
    ui.stdin.write('\t');
    await untilFrame(ui, '› read @src/');
    ui.stdin.write('\t');
    await untilFrame(ui, '› read @src/index.ts');
  });

  it('collapses a large paste and sends it whole', async () => {
    const { ui, sent } = prompt();
    const big = Array.from({ length: 40 }, (_, i) => `pasted ${i}`).join('\n');
    ui.stdin.write(big);
    await untilFrame(ui, '[Pasted text #1 +40 lines]');
    ui.stdin.write('\r');
    await until(() => sent.length > 0, 'the paste to be sent');
    expect(sent).toEqual([big]);
  });

  it('passes Esc, Shift+Tab, Ctrl+C and Ctrl+D on', async () => {
    const { ui, events } = prompt();
    const handled = (n: number) => until(() => events.length >= n, `${n} keys passed on`);
    ui.stdin.write('\x1b');
    await handled(1);
    ui.stdin.write('\x1b[Z');
    await handled(2);
    ui.stdin.write('typed');
    await untilFrame(ui, '› typed');
    ui.stdin.write('\x03');
    await handled(3);
    ui.stdin.write('\x03');
    await handled(4);
    ui.stdin.write('\x04');
    await handled(5);
    expect(events).toEqual(['escape', 'mode', 'ctrl-c:true', 'ctrl-c:false', 'ctrl-d']);
  });
});

const question = (over: Partial<Extract<Question, { kind: 'permission' }>> = {}): Extract<Question, { kind: 'permission' }> => ({
  kind: 'permission',
  call: { id: 'c1', name: 'bash', input: { command: 'rm -rf build' } },
  reason: 'bash is an execute tool',
  options: ['allow_once', 'allow_session', 'deny', 'deny_session'],
  ...over,
});

function dialog(q = question()) {
  const answers: Answer[] = [];
  const ui = render(patient(<PermissionDialog question={q} waiting={1} glyphs={glyphs} paint={paint} width={60} maxRows={14} onAnswer={(a) => answers.push(a)} />));
  cleanup.push(() => ui.unmount());
  return { ui, answers };
}

describe('the permission dialog', () => {
  it('shows the tool, the command, the reason, the queue and the four answers', () => {
    const frame = dialog().ui.lastFrame()!;
    expect(frame).toContain('bash wants permission (1 more waiting)');
    expect(frame).toContain('rm -rf build');
    expect(frame).toContain('bash is an execute tool');
    expect(frame).toMatch(/1\. Allow once[\s\S]*2\. Allow this session[\s\S]*3\. Deny[\s\S]*4\. Deny, and don't ask again/);
  });

  it('answers by digit, by y and n, by arrows and Enter, and denies on Esc', async () => {
    for (const [keys, choice] of [
      [['2'], 'allow_session'],
      [['y'], 'allow_once'],
      [['n'], 'deny'],
      [['\x1b[B', '\x1b[B', '\x1b[B', '\r'], 'deny_session'],
      [['\x1b'], 'deny'],
    ] as const) {
      const { ui, answers } = dialog();
      for (const key of keys.slice(0, -1)) await pressAndRedraw(ui, key, 'the selection to move');
      ui.stdin.write(keys.at(-1)!);
      await until(() => answers.length > 0, `the answer to ${JSON.stringify(keys)}`);
      expect(answers).toEqual([{ kind: 'permission', choice }]);
    }
  });

  it('shows the diff of an edit, cut to the rows there are', () => {
    const preview = ['--- a.ts', '+++ a.ts', '@@ -1,30 +1,30 @@', ...Array.from({ length: 30 }, (_, i) => `+line ${i}`)].join('\n');
    const frame = dialog(question({ call: { id: 'e', name: 'edit_file', input: { path: 'a.ts' } }, preview })).ui.lastFrame()!;
    expect(frame).toContain('edit_file(a.ts) wants permission');
    expect(frame).toContain('+++ a.ts');
    expect(frame).toMatch(/… \+\d+ more lines/);
    expect(frame.split('\n').length).toBeLessThanOrEqual(14);
  });

  it('shows the URL of a fetch', () => {
    const frame = dialog(question({ call: { id: 'w', name: 'web_fetch', input: { url: 'https://example.com/page', prompt: 'summarize' } } })).ui.lastFrame()!;
    expect(frame).toContain('https://example.com/page');
  });
});

describe('the resume picker', () => {
  const sessions = [
    { id: 'aaaa1111', lastActivity: new Date('2026-01-02T10:00:00Z'), firstPrompt: 'fix the parser', turns: 3, costUsd: 0.12 },
    { id: 'bbbb2222', lastActivity: new Date('2026-01-01T10:00:00Z'), firstPrompt: 'write the docs', turns: 1, costUsd: 0.01 },
  ];

  it('filters as you type and picks with Enter; Esc starts a new session', async () => {
    const picked: Array<string | null> = [];
    const ui = render(<ResumePicker sessions={sessions} glyphs={glyphs} maxRows={10} onPick={(id) => picked.push(id)} />);
    cleanup.push(() => ui.unmount());
    expect(ui.lastFrame()).toContain('fix the parser');
    ui.stdin.write('docs');
    await untilFrame(ui, 'Search: docs');
    expect(ui.lastFrame()).not.toContain('fix the parser');
    ui.stdin.write('\r');
    await until(() => picked.length === 1, 'the pick');
    ui.stdin.write('\x1b');
    await until(() => picked.length === 2, 'Esc to start a new session');
    expect(picked).toEqual(['bbbb2222', null]);
  });
});

describe('the trust dialog', () => {
  it('lists what would run and answers yes or no', async () => {
    const answers: boolean[] = [];
    const ui = render(patient(<TrustDialog question={{ folder: '/work/app', files: ['/work/app/agent.config.ts'] }} glyphs={glyphs} onAnswer={(a) => answers.push(a)} />));
    cleanup.push(() => ui.unmount());
    expect(ui.lastFrame()).toContain('/work/app/agent.config.ts');
    ui.stdin.write('n');
    await until(() => answers.length === 1, 'the answer to n');
    await pressAndRedraw(ui, '\x1b[B', 'the selection to move down');
    await pressAndRedraw(ui, '\x1b[A', 'the selection to move up');
    ui.stdin.write('\r');
    await until(() => answers.length === 2, 'the answer to Enter');
    expect(answers).toEqual([false, true]);
  });

  it('once answered, is replaced by one line saying what was decided; its file list is cut to the rows there are', async () => {
    const done: boolean[] = [];
    const files = Array.from({ length: 30 }, (_, i) => `/work/app/.keel/hooks/hook-${i}.sh`);
    const ui = render(patient(<TrustQuestionScreen question={{ folder: '/work/app', files }} glyphs={glyphs} rows={14} onDone={(a) => done.push(a)} />));
    cleanup.push(() => ui.unmount());
    expect(ui.lastFrame()!.split('\n').length).toBeLessThan(14);
    expect(ui.lastFrame()).toContain('hook-0.sh');
    expect(ui.lastFrame()).toContain('… and 25 more');
    ui.stdin.write('y');
    await untilFrame(ui, 'Trusted /work/app');
    await until(() => done.length === 1, 'the answer to be passed on');
    // A key after the answer is handled at once (ink-testing-library's stdin is synchronous) and changes nothing.
    ui.stdin.write('n');
    expect(done).toEqual([true]);
    expect(ui.lastFrame()).toBe('Trusted /work/app');
    const no = render(patient(<TrustQuestionScreen question={{ folder: '/work/b', files: ['/work/b/agent.config.ts'] }} glyphs={glyphs} rows={40} onDone={(a) => done.push(a)} />));
    cleanup.push(() => no.unmount());
    no.stdin.write('\x1b');
    await untilFrame(no, 'Not trusted');
    await until(() => done.length === 2, 'the answer to be passed on');
    expect(done).toEqual([true, false]);
    expect(no.lastFrame()).toBe('Not trusted: /work/b (its project settings are not loaded)');
  });
});

describe('the footer', () => {
  it('shows model, permission mode, context used and cost', () => {
    const ui = render(<Footer glyphs={glyphs} model="claude-x" mode="edits" contextTokens={50_000} contextWindow={200_000} cost={0.1234} hint={null} />);
    cleanup.push(() => ui.unmount());
    expect(ui.lastFrame()).toBe('claude-x · edits mode (shift+tab) · 25% context · $0.1234');
  });
});

describe('the spinner', () => {
  it('stops counting while a dialog waits for the user and goes on from there once it is answered', async () => {
    let now = 1_000_000;
    const transcript = new Transcript({ paint, glyphs, width: () => 80, frameMs: 1, now: () => now });
    const spinner = () => <Spinner glyphs={glyphs} elapsed={() => transcript.elapsed()} paused={transcript.waiting} tokens={0} thinking={false} notice={null} />;
    transcript.startTurn();
    now += 5_000;
    const ui = render(spinner());
    cleanup.push(() => ui.unmount());
    expect(ui.lastFrame()).toMatch(/Working… \(5s · 0 tokens · esc to interrupt\)/);
    transcript.setWaiting(true);
    now += 90_000;
    ui.rerender(spinner());
    await untilFrame(ui, /Waiting for your answer… \(5s · 0 tokens\)/);
    // Frozen: the animation stops too, so nothing is redrawn while the user reads the question.
    const frames = ui.frames.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(ui.frames.length).toBe(frames);
    transcript.setWaiting(false);
    now += 2_000;
    ui.rerender(spinner());
    expect(ui.lastFrame()).toMatch(/Working… \(7s · 0 tokens · esc to interrupt\)/);
    // A second wait in the same turn is taken out too; a new turn starts from zero.
    transcript.setWaiting(true);
    now += 10_000;
    transcript.setWaiting(false);
    expect(transcript.elapsed()).toBe(7_000);
    transcript.endTurn();
    transcript.startTurn();
    now += 1_000;
    expect(transcript.elapsed()).toBe(1_000);
    transcript.dispose();
  });
});
