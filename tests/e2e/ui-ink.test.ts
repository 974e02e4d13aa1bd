import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptStep } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux, readBytes, send, waitForDialog } from '../helpers/tmux.js';
import { recordSession, streamedAnswer } from '../helpers/ui-fixtures.js';
import type { Workspace } from '../helpers/workspace.js';
import { runKeel } from '../helpers/cli.js';

const fixture = terminalFixture();

/** A workspace, a scripted server and keel's Ink UI on a terminal, with the prompt on screen. */
function start(script: ScriptStep[], opts: { args?: string[]; width?: number; height?: number; env?: Record<string, string>; prepare?: (ws: Workspace) => Promise<void> | void; waitFor?: RegExp } = {}) {
  const { waitFor, ...rest } = opts;
  return fixture.start(script, { ...rest, ready: waitFor ?? /ask mode/ });
}

describe.skipIf(!hasTmux)('the Ink UI in a terminal', () => {
  it('shows a call the policy refused (a deny rule) as a denial with its reason, without asking', async () => {
    const { term: t, server: s } = await start([callTool('bash', { command: 'rm -rf build' }), say('could not clean')], { args: ['--disallowedTools', 'Bash(rm:*)'] });
    send(t, 'clean up');
    const screen = await t.waitFor(/could not clean/);
    expect(screen).toMatch(/bash\(rm -rf build\) denied: .*Bash\(rm:\*\)/);
    expect(screen).not.toContain('wants permission');
    expect(JSON.stringify(s.requests.at(-1)!.body.messages.at(-1).content[0])).toContain('is_error');
  });

  it('Shift+Tab cycles ask → edits → plan and back to the mode the flag set (auto); !cmd runs without asking and joins the context', async () => {
    const { term: t, server: s } = await start([say('seen it')], { args: ['--permission-mode', 'auto'], waitFor: /auto mode/ });
    for (const mode of ['ask', 'edits', 'plan', 'auto', 'ask']) {
      t.keys('BTab');
      await t.waitFor(new RegExp(`${mode} mode \\(shift\\+tab\\)`));
    }
    send(t, '!echo ink-$((20+1))');
    expect(await t.waitFor(/ink-21/)).not.toContain('wants permission');
    send(t, 'what did I run?');
    await t.waitFor(/seen it/);
    expect(JSON.stringify(s.requests[0]!.body.messages)).toMatch(/<bash-input>echo ink-\$\(\(20\+1\)\)<\/bash-input>.*<bash-stdout>ink-21/);
  });

  it('type-ahead: a line and Enter typed before the prompt is drawn are sent', async () => {
    const { server, term } = await fixture.start([say('typed ahead and answered')], { ready: false });
    // At once, while keel starts: the terminal is still in its line mode, so the line arrives whole, Enter as \n.
    term.type('hello before start');
    term.keys('Enter');
    await term.waitFor(/typed ahead and answered/);
    expect(JSON.stringify(server.requests[0]!.body.messages[0])).toContain('hello before start');
  });

  it('/help wraps a long description under itself, not at column 0', async () => {
    const { term: t } = await start([], { width: 70, height: 60 });
    send(t, '/help');
    const screen = await t.waitFor(/^\/permissions +show the permission mode/m);
    const lines = screen.split('\n');
    const at = lines.findIndex((l) => l.startsWith('/permissions'));
    const indent = lines[at]!.indexOf('show');
    expect(lines[at + 1]!.slice(0, indent).trim()).toBe('');
    expect(lines[at + 1]!.slice(indent)).toMatch(/^\S/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(70);
  });

  it('says at start when there is no API key, and how to set one', async () => {
    const { term: t } = await start([say('unused')], { env: { ANTHROPIC_API_KEY: '' } });
    expect(await t.waitFor(/No API key/)).toMatch(/No API key: set ANTHROPIC_API_KEY \(or apiKey in agent\.config\.ts\), or run keel login/);
  });

  it('streams an answer to a typed prompt, runs /cost, recalls history with Up, and Ctrl+D exits with the session saved', async () => {
    const { term: t } = await start([say('Here is **the answer**, streamed.\n\n```js\nconst answer = 42;\n```')]);
    send(t, 'what is the answer?');
    await t.waitFor(/const answer = 42;/);
    const screen = await t.waitFor(/Here is the answer, streamed\./);
    expect(screen).toContain('> what is the answer?');
    send(t, '/cost');
    await t.waitFor(/Total cost:/);
    t.keys('Up');
    await t.waitFor(/› \/cost/);
    t.keys('Up');
    await t.waitFor(/› what is the answer\?/);
    t.keys('C-u', 'C-d');
    const end = await t.waitFor(/EXIT=\d+/);
    expect(end).toMatch(/Session saved\. Resume it with: keel --resume [\w-]+/);
    expect(end).toContain('EXIT=0');
    expect(end).not.toContain('ask mode');
  });

  it('approves one permission prompt and denies another', async () => {
    const { term: t, server: s } = await start([
      callTool('bash', { command: 'echo allowed-$((40+2))' }),
      say('first done'),
      callTool('bash', { command: 'echo never-ran' }),
      say('second done'),
    ]);
    send(t, 'run the first');
    // The whole dialog, its last answer included, before a key is pressed.
    const dialog = /bash wants permission[\s\S]*1\. Allow once[\s\S]*2\. Allow this session[\s\S]*3\. Deny[\s\S]*4\. Deny, and don't ask again/;
    await waitForDialog(t, dialog);
    t.keys('y');
    await t.waitFor(/allowed-42[\s\S]*first done/);
    send(t, 'run the second');
    await waitForDialog(t, dialog);
    t.keys('Down', 'Down', 'Enter');
    const after = await t.waitFor(/second done/);
    expect(after, after).toMatch(/bash\(echo never-ran\) denied/);
    const denied = s.requests[3].body.messages.at(-1).content[0];
    expect(denied).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.stringify(denied.content)).toContain('Permission denied by the user');
  });

  it('Esc interrupts a long stream and the prompt takes the next request', async () => {
    const { term: t, server: s } = await start([
      say('The start of a long answer. '.repeat(10), { beforeEvent: (ctx) => (ctx.index >= 5 ? ctx.closed : undefined) }),
      say('after the interruption'),
    ]);
    send(t, 'talk for a long time');
    await t.waitFor(/The start of a long answer/);
    t.keys('Escape');
    // Only that it was interrupted: no "cut off … Request was aborted" for the user's own stop.
    expect(await t.waitFor(/Interrupted\./)).not.toMatch(/cut off|aborted/);
    expect(await s.requests[0].finished).toBe('closed-early');
    send(t, 'and now?');
    await t.waitFor(/after the interruption/);
  });

  it('Ctrl+O shows the full output of a collapsed result and Esc takes it away, leaving nothing in the scrollback', async () => {
    const { term: t } = await start([callTool('bash', { command: 'seq 101 140' }), say('counted')], { args: ['--permission-mode', 'auto'], waitFor: /auto mode/ });
    send(t, 'count');
    // The collapsed result and the answer after it, on one screen: the turn is over and Ctrl+O has a result to show.
    await t.waitFor(/104\n\s+… \+36 lines \(ctrl\+o to expand\)[\s\S]*counted/);
    t.keys('C-o');
    await t.waitFor(/bash\(seq 101 140\) · 40 lines/);
    t.keys('End');
    const view = await t.waitFor(/rows \d+-40 of 40/);
    expect(view).toMatch(/^\s+140$/m);
    // The view is gone once its key line is (the footer's "auto mode" stays on screen throughout).
    const closed = /^(?![\s\S]*esc or ctrl\+o back)[\s\S]*auto mode/;
    t.keys('Escape');
    await t.waitFor(closed);
    const history = t.history();
    expect(history).not.toContain('esc or ctrl+o back');
    expect(history).not.toMatch(/^\s+140$/m);
    t.keys('C-o');
    await t.waitFor(/esc or ctrl\+o back/);
    t.keys('C-o');
    await t.waitFor(closed);
  });

  it('asks whether to trust a folder with project settings, remembers yes, and loads them', async () => {
    const { term: t, ws: w } = await start([], {
      prepare: (w) => void w.write('agent.config.ts', "export default { model: 'model-from-the-project' };\n"),
      // The whole dialog, its answers included, before a key is pressed.
      waitFor: /Do you trust the files in this folder\?[\s\S]*agent\.config\.ts[\s\S]*No, continue without its settings/,
    });
    // Read before answering: keys typed the moment a question appears are not taken as answers.
    await waitForDialog(t, /Do you trust the files in this folder\?[\s\S]*No, continue without its settings/);
    t.keys('y');
    await t.waitFor(/model-from-the-project/);
    // The answered dialog is gone from the screen and the scrollback; one line says what was decided.
    const history = await t.waitFor(`Trusted ${realpathSync(w.dir)}`, { history: true });
    expect(history).not.toContain('Do you trust the files');
    expect(history).not.toContain('Trusting it lets these run');
    expect(history).not.toContain('Yes, trust this folder');
    const trusted = JSON.parse(readFileSync(path.join(w.home, 'trusted-folders.json'), 'utf8'));
    expect(trusted.folders).toEqual([realpathSync(w.dir)]);
    t.keys('C-c');
    await t.waitFor(/Press Ctrl\+C again to exit/);
    t.keys('C-c');
    expect(await t.waitFor(/EXIT=\d+/)).toContain('EXIT=0');
  });

  it('keel --resume without an id shows a picker that searches as you type', async () => {
    const ws = fixture.workspace();
    const older = await recordSession(ws, 1, 'a question about apples');
    const newer = await recordSession(ws, 1, 'a question about pears');
    expect(older).not.toBe(newer);
    const server = await fixture.server([say('resumed and answering')]);
    const t = fixture.terminal({ ws, server, args: ['--resume'] });
    await t.waitFor(/Resume a session[\s\S]*pears[\s\S]*apples/);
    t.type('apples');
    // Until the other session is filtered out: a picker that kept it would time out here.
    await t.waitFor(/^(?![\s\S]*pears)[\s\S]*Search: apples/);
    t.keys('Enter');
    await t.waitFor(/Resumed session/);
    await t.waitFor(/> a question about apples/);
    send(t, 'go on');
    await t.waitFor(/resumed and answering/);
    const sent = server.requests[0].body.messages.map((m: { content: unknown }) => JSON.stringify(m.content));
    expect(sent[0]).toContain('a question about apples');
  });

  it('sends a prompt given on the command line first', async () => {
    const { term: t } = await start([say('answered the argument')], { args: ['hello from the command line'], waitFor: /answered the argument/ });
    await t.waitFor(/> hello from the command line/);
  });

  it('keel --continue resumes the newest session and shows its conversation', async () => {
    const ws = fixture.workspace();
    await recordSession(ws, 1, 'the older one');
    await recordSession(ws, 2, 'the newest one');
    const server = await fixture.server([say('continued')]);
    const term = fixture.terminal({ ws, server, args: ['--continue'] });
    await term.waitFor(/Resumed session .* \(4 messages\)/);
    const screen = await term.waitFor(/> the newest one\nanswer 1: [^\n]*\n> question 2\nanswer 2:/);
    expect(screen).toMatch(/Resumed session .* \(4 messages\)/);
    expect(screen).not.toContain('the older one');
  });

  it('writes each answer taller than the screen to the scrollback exactly once, in order, with nothing erased', async () => {
    const answer = (n: number) => Array.from({ length: 25 }, (_, i) => `answer-${n}-line-${String(i + 1).padStart(2, '0')}`).join('\n');
    const { term: t } = await start([say(answer(1)), say(answer(2)), say(answer(3))], { height: 12, width: 60 });
    for (const n of [1, 2, 3]) {
      send(t, `prompt ${n}`);
      await t.waitFor(new RegExp(`answer-${n}-line-25`));
      await t.waitFor(/ask mode/);
    }
    const all = t.history().split('\n');
    const expected = [1, 2, 3].flatMap((n) => [`> prompt ${n}`, ...answer(n).split('\n')]);
    const found = expected.map((line) => all.filter((l) => l.trim() === line).length);
    expect(found).toEqual(expected.map(() => 1));
    const positions = expected.map((line) => all.findIndex((l) => l.trim() === line));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    // contiguous: nothing between an answer's lines
    for (const n of [1, 2, 3]) {
      const first = all.findIndex((l) => l.trim() === `answer-${n}-line-01`);
      expect(all.slice(first, first + 25).map((l) => l.trim())).toEqual(answer(n).split('\n'));
    }
  });
});

/** The terminal bytes of one streamed answer: how many, and how far up the cursor ever went at once. */
function analyse(bytes: string): { bytes: number; maxUp: number; clears: number; synced: number } {
  let maxUp = 0;
  let run = 0;
  // Cursor-up moves in a row (with only other control sequences between them) are one jump up.
  const tokens = bytes.match(/\x1b\[(\d*)A|\x1bM|\x1b\[[\d;?]*[A-Za-z]|[^\x1b]+/g) ?? [];
  for (const token of tokens) {
    const up = /^\x1b\[(\d*)A$/.exec(token);
    if (up) run += Number(up[1] || 1);
    else if (token === '\x1bM') run += 1;
    else if (!token.startsWith('\x1b')) {
      maxUp = Math.max(maxUp, run);
      run = 0;
    }
  }
  maxUp = Math.max(maxUp, run);
  const clears = (bytes.match(/\x1b\[2J|\x1b\[3J|\x1b\[H|\x1b\[\?1049h/g) ?? []).length;
  // redraws begun inside DEC 2026 synchronized output
  const synced = (bytes.match(/\x1b\[\?2026h/g) ?? []).length;
  return { bytes: bytes.length, maxUp, clears, synced };
}

describe.skipIf(!hasTmux)('the Ink UI does not flicker', () => {
  // Tokens arrive slower than frames (40 ms apart), so the count of frames follows the tokens, not the machine's speed.
  const TOKENS = 120;
  const ROWS = 20;

  async function streamOnce(exchanges: number): Promise<ReturnType<typeof analyse>> {
    const ws = fixture.workspace();
    const id = await recordSession(ws, exchanges);
    const server = await fixture.server([streamedAnswer(TOKENS, 'END-OF-ANSWER', 40)]);
    const term = fixture.terminal({ ws, server, args: ['--resume', id], height: ROWS, width: 100 });
    await term.waitFor(/Resumed session .* \(\d+ messages\)/, { history: true });
    await term.waitFor(/ask mode/);
    const file = path.join(ws.dir, '..', 'bytes.log');
    term.type('stream please');
    await term.waitFor(/› stream please/);
    term.record(file);
    term.keys('Enter');
    // A bound, not a timing assertion: the answer takes about 5 s, longer on a busy machine.
    await term.waitFor(/END-OF-ANSWER/, { timeoutMs: 90_000 });
    await term.waitFor(/ask mode/);
    await term.stopRecording();
    const bytes = readBytes(file);
    rmSync(file, { force: true });
    await fixture.cleanup();
    return analyse(bytes);
  }

  it('bytes per token at message 500 stay within a small factor of those at message 10, and the cursor never goes above the live region', async () => {
    const small = await streamOnce(5);
    const large = await streamOnce(250);
    for (const run of [small, large]) {
      expect(run.clears).toBe(0);
      expect(run.synced).toBeGreaterThan(0);
      expect(run.maxUp).toBeGreaterThan(0);
      expect(run.maxUp).toBeLessThan(ROWS);
    }
    const perTokenSmall = small.bytes / TOKENS;
    const perTokenLarge = large.bytes / TOKENS;
    expect(perTokenLarge / perTokenSmall).toBeLessThan(2);
  }, 300_000);
});

describe.skipIf(!hasTmux)('the Ink UI on small and plain terminals', () => {
  it('works in 40 columns and 10 rows, with NO_COLOR and a non-UTF-8 locale', async () => {
    const { term: t, ws } = await start([callTool('bash', { command: 'echo small-screen-ok' }), say('fits')], {
      width: 40,
      height: 10,
      env: { NO_COLOR: '1', LANG: 'C', LC_ALL: 'C' },
    });
    send(t, 'go');
    await waitForDialog(t, /bash wants permission/);
    t.keys('1');
    const screen = await t.waitFor(/small-screen-ok[\s\S]*fits/);
    // ASCII only: no box-drawing or braille glyphs under the C locale
    expect(screen).not.toMatch(/[^\x00-\x7f]/);
    // NO_COLOR: no colour in any SGR sequence, but the cursor is still drawn inverse and hints dim
    const styled = t.styledScreen();
    const params = [...styled.matchAll(/\x1b\[([\d;:]*)m/g)].flatMap((m) => m[1].split(';'));
    // (39 and 49, "default colour", are how tmux itself writes plain cells)
    expect(params.filter((p) => /^(3[0-8]|4[0-8]|9[0-7]|10[0-7])$/.test(p)), styled).toEqual([]);
    expect(params).toContain('7');
    expect(params).toContain('2');
    expect(existsSync(ws.home)).toBe(true);
  });
});
