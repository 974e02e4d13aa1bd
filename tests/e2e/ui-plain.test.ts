import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptStep } from '../helpers/anthropic-server.js';
import { historyFile } from '../../plugins/session-store/prompt-history.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux, readBytes, send, waitForDialog } from '../helpers/tmux.js';
import { recordSession } from '../helpers/ui-fixtures.js';
import type { Workspace } from '../helpers/workspace.js';

const fixture = terminalFixture();

/** The plain UI (or, with `flag: false`, the UI keel picks itself) on a terminal, with the prompt on screen. */
function start(script: ScriptStep[], opts: { args?: string[]; prepare?: (ws: Workspace) => Promise<void> | void; waitFor?: RegExp; flag?: boolean; width?: number; env?: Record<string, string> } = {}) {
  const { flag, waitFor, args = [], ...rest } = opts;
  return fixture.start(script, { ...rest, args: [...(flag === false ? [] : ['--ui', 'plain']), ...args], ready: waitFor ?? /^> ?$/m });
}

/** Writes this project's prompt history, oldest first, as earlier runs would have left it. */
function seedHistory(w: Workspace, entries: string[]): void {
  const file = historyFile(w.home, realpathSync(w.dir));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
}

/** The text of the user's last message in a recorded request. */
function lastPrompt(body: { messages: Array<{ role: string; content: unknown }> }): string {
  const content = body.messages.at(-1)?.content;
  if (typeof content === 'string') return content;
  return (content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text).join('');
}

describe.skipIf(!hasTmux)('the plain UI (--ui plain) in a terminal', () => {
  it('chosen by the user config: streams an answer, runs /cost, recalls history with Up, and Ctrl+D exits with the session saved', async () => {
    const { term: t, ws: w } = await start([say('the plain answer')], { flag: false, prepare: (w) => writeFileSync(path.join(w.home, 'agent.config.ts'), "export default { ui: 'plain' };\n") });
    send(t, 'hello plain');
    // The status line comes with the next prompt, after the answer.
    await t.waitFor(/the plain answer[\s\S]*\[claude-sonnet-5-5 - ask mode - \d+% context - \$[\d.]+\]/);
    send(t, '/cost');
    await t.waitFor(/Total cost:/);
    t.keys('Up', 'Up');
    await t.waitFor(/^> hello plain$/m);
    t.keys('C-u', 'C-d');
    const end = await t.waitFor(/EXIT=\d+/);
    expect(end).toMatch(/Session saved\. Resume it with: keel --resume [\w-]+/);
    expect(end).toContain('EXIT=0');
    expect(existsSync(path.join(w.home, 'history'))).toBe(true);
  });

  it('approves one permission question and denies another', async () => {
    const { term: t, server: s } = await start([callTool('bash', { command: 'echo plain-$((1+1))' }), say('one'), callTool('bash', { command: 'echo not-run' }), say('two')]);
    send(t, 'first');
    await waitForDialog(t, /Answer \[1-4/);
    expect(t.screen()).toMatch(/1\) Allow once {2}2\) Allow this session {2}3\) Deny {2}4\) Deny, and don't ask again/);
    send(t, 'y');
    await t.waitFor(/^one$/m);
    // The output once, as it streamed, then the call's [done] line alone.
    expect(t.screen()).toContain('  > plain-2');
    expect(t.screen().match(/plain-2/g)).toHaveLength(1);
    expect(t.screen()).toMatch(/^\[done\] bash: echo plain-\$\(\(1\+1\)\)$/m);
    send(t, 'second');
    // A question takes only lines typed after it is asked: wait for this one before answering.
    await waitForDialog(t, /echo not-run[\s\S]*Answer \[1-4[^\n]*\s*$/);
    send(t, '3');
    await t.waitFor(/^two$/m);
    expect(t.screen()).toContain('[permission] bash: echo not-run: Deny');
    expect(t.screen()).not.toContain('[not run]');
    expect(s.requests[3].body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', is_error: true });
  });

  it('"Deny" asks again at the next prompt; "Deny, and don\'t ask again" is a deny rule /permissions lists and removes', async () => {
    const call = () => callTool('bash', { command: 'echo denied-twice' });
    const { term: t, server: s } = await start([call(), say('one'), call(), say('two'), call(), say('three'), call(), say('four')], { width: 200 });
    const question = /echo denied-twice[^\n]*\n(?:[^\n]*\n)*?[^\n]*Answer \[1-4[^\n]*\s*$/;
    send(t, 'first');
    await waitForDialog(t, question);
    send(t, '3');
    await t.waitFor(/^one$/m);
    send(t, 'second');
    // Asked again: a plain "Deny" is not remembered past its prompt.
    await waitForDialog(t, question);
    send(t, '4');
    await t.waitFor(/^two$/m);
    expect(t.screen()).toContain("[permission] bash: echo denied-twice: Deny, and don't ask again (deny rule bash added for this session; /permissions remove bash lifts it)");
    send(t, 'third');
    await t.waitFor(/^three$/m);
    expect(t.screen()).toMatch(/\[denied\] bash: echo denied-twice: Permission denied: [^\n]*bash/);
    send(t, '/permissions');
    await t.waitFor(/deny:\n\s+bash {2}\(this session\)/);
    send(t, '/permissions remove bash');
    await t.waitFor(/Removed: bash/);
    send(t, 'fourth');
    await waitForDialog(t, question);
    send(t, 'y');
    await t.waitFor(/^four$/m);
    expect(s.requests.filter((r) => r.body.messages.at(-1).content[0]?.is_error === true)).toHaveLength(3);
  });

  it('says at start when there is no API key, and how to set one', async () => {
    const { term: t } = await start([say('unused')], { env: { ANTHROPIC_API_KEY: '' }, width: 200 });
    await t.waitFor('[warn] No API key: set ANTHROPIC_API_KEY (or apiKey in agent.config.ts), or run keel login, then start keel again.');
  });

  it('Esc interrupts a long stream', async () => {
    const { term: t } = await start([say('A long plain answer. '.repeat(5), { beforeEvent: (ctx) => (ctx.index >= 5 ? ctx.closed : undefined) }), say('next one')]);
    send(t, 'go long');
    await t.waitFor(/A long plain answer/);
    t.keys('Escape');
    await t.waitFor(/\[interrupted\]/);
    expect(t.screen()).not.toMatch(/cut off|aborted/);
    send(t, 'again');
    await t.waitFor(/next one/);
  });

  it('asks whether to trust the folder; no keeps its settings out', async () => {
    const { term: t, ws: w } = await start([say('ok')], {
      prepare: (w) => void w.write('agent.config.ts', "export default { model: 'project-model' };\n"),
      waitFor: /Trust this folder \(remembered\)\? \[y\/n\]/,
    });
    await waitForDialog(t, /Trust this folder/);
    expect(t.screen()).toContain('agent.config.ts');
    send(t, 'n');
    await t.waitFor(/^> ?$/m);
    send(t, 'hi');
    await t.waitFor(/^ok$[\s\S]*\[claude-sonnet-5-5 -/m);
    expect(existsSync(path.join(w.home, 'trusted-folders.json'))).toBe(false);
    t.keys('C-c');
    await t.waitFor(/press Ctrl\+C again to exit/);
    t.keys('C-c');
    expect(await t.waitFor(/EXIT=\d+/)).toContain('EXIT=0');
  });

  it('asks whether to trust the folder; yes is remembered and loads its settings', async () => {
    const { term: t, ws: w } = await start([say('ok')], {
      prepare: (w) => void w.write('agent.config.ts', "export default { model: 'project-model' };\n"),
      waitFor: /\[y\/n\]/,
    });
    await waitForDialog(t, /\[y\/n\]/);
    send(t, 'y');
    await t.waitFor(/^> ?$/m);
    send(t, 'hi');
    await t.waitFor(/\[project-model -/);
    expect(JSON.parse(readFileSync(path.join(w.home, 'trusted-folders.json'), 'utf8')).folders).toEqual([realpathSync(w.dir)]);
  });

  it('keys typed while a turn runs stay out of the answer and the question; a line finished with Enter is sent next, shown at its prompt', async () => {
    const { term: t, server: s } = await start([
      { ...callTool('bash', { command: 'echo asked' }, undefined, 'Let me run a command for you now.'), eventDelayMs: 150 },
      say('first done'),
      say('second done'),
    ]);
    send(t, 'go');
    await t.waitFor(/Let me/);
    t.type('typed during the turn');
    t.keys('Enter');
    t.type('half typed');
    await waitForDialog(t, /Answer \[1-4/);
    const asking = t.screen();
    expect(asking).toMatch(/^Let me run a command for you now\.$/m);
    expect(asking).not.toContain('typed');
    send(t, 'y');
    await t.waitFor(/^second done$/m);
    // The line typed during the turn is shown at its prompt as it is sent, and sent whole; the draft waits at the next prompt.
    const after = await t.waitFor(/^> half typed$/m);
    expect(after).toMatch(/^first done$[\s\S]*^> typed during the turn$[\s\S]*^second done$/m);
    expect(lastPrompt(s.requests[2]!.body)).toBe('typed during the turn');
  });

  it('sends a prompt given on the command line first', async () => {
    const { term: t } = await start([say('plain argument answered')], { args: ['from argv'], waitFor: /plain argument answered/ });
    expect(t.screen()).toContain('> from argv');
  });

  it('keel --resume without an id lists the sessions, filters by text and resumes the one picked', async () => {
    const ws = fixture.workspace();
    await recordSession(ws, 1, 'about apples');
    await recordSession(ws, 1, 'about pears');
    const server = await fixture.server([say('resumed')]);
    const t = fixture.terminal({ ws, server, args: ['--ui', 'plain', '--resume'] });
    await t.waitFor(/Number to resume/);
    expect(t.screen()).toMatch(/1\) .*about pears[\s\S]*2\) .*about apples/);
    send(t, 'apples');
    await t.waitFor(/Sessions matching "apples"/);
    send(t, '1');
    await t.waitFor(/Resumed session .* \(2 messages\)/);
    send(t, 'continue');
    await t.waitFor(/^resumed$/m);
    expect(JSON.stringify(server.requests[0].body.messages[0])).toContain('about apples');
  });

  it('Ctrl+R searches history as you type: refine, step older, failing, cancel, take to edit, Enter sends', async () => {
    const { term: t, server: s } = await start([say('sent the edited one'), say('sent the match')], {
      prepare: (w) => seedHistory(w, ['fix the parser', 'deploy the app', 'lint everything', 'deploy the docs']),
    });
    t.type('draft');
    t.keys('C-r');
    await t.waitFor(/\(reverse-i-search\)'':/);
    t.type('pars');
    await t.waitFor(/\(reverse-i-search\)'pars': fix the parser/);
    t.keys('BSpace', 'BSpace', 'BSpace', 'BSpace');
    t.type('deploy');
    await t.waitFor(/\(reverse-i-search\)'deploy': deploy the docs/);
    t.keys('C-r');
    await t.waitFor(/\(reverse-i-search\)'deploy': deploy the app/);
    t.keys('C-r');
    await t.waitFor(/\(failing reverse-i-search\)'deploy': deploy the app/);
    // Esc goes back to the line as it was.
    t.keys('Escape');
    await t.waitFor(/^> draft\s*$/m);
    // Ctrl+G too, after a search that found something.
    t.keys('C-r');
    t.type('lint');
    await t.waitFor(/'lint': lint everything/);
    t.keys('C-g');
    await t.waitFor(/^> draft\s*$/m);
    // Right takes the match into the line to edit it; Ctrl+E, more text, Enter sends it.
    t.keys('C-u', 'C-r');
    t.type('docs');
    await t.waitFor(/'docs': deploy the docs/);
    t.keys('Right', 'C-e');
    t.type(' now');
    await t.waitFor(/^> deploy the docs now\s*$/m);
    t.keys('Enter');
    await t.waitFor(/sent the edited one/);
    expect(lastPrompt(s.requests[0].body)).toBe('deploy the docs now');
    // Enter in the search sends the match at once, as bash does; Ctrl+R on an empty query takes the last one again.
    t.keys('C-r', 'C-r');
    await t.waitFor(/'docs': deploy the docs now/);
    t.keys('BSpace', 'BSpace', 'BSpace', 'BSpace');
    t.type('fix');
    await t.waitFor(/'fix': fix the parser/);
    t.keys('Enter');
    await t.waitFor(/sent the match/);
    expect(lastPrompt(s.requests[1].body)).toBe('fix the parser');
    expect(t.screen()).toMatch(/^> fix the parser\s*$/m);
  });

  it('keeps the Ctrl+R search on one row of a 40-column terminal', async () => {
    const long = `please look at ${'the very long history entry '.repeat(4)}and find the needle in it`;
    const { term: t } = await start([], { width: 40, prepare: (w) => seedHistory(w, [long, 'short one']) });
    t.keys('C-r');
    t.type('needle');
    const screen = await t.waitFor(/'needle': .*needle/);
    const row = screen.split('\n').find((l) => l.includes('reverse-i-search')) ?? '';
    expect(row.length).toBeLessThan(40);
    expect(screen).not.toMatch(/^and find/m);
    t.keys('C-g');
    await t.waitFor(/^> ?\s*$/m);
  });

  it('a bracketed paste of several lines does not submit on its newlines: Enter sends it whole as one prompt', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-paste-'));
    try {
      const { term: t, server: s } = await start([say('got the block'), say('got it again')]);
      const bytes = path.join(dir, 'bytes');
      t.record(bytes);
      t.type('review this: ');
      t.paste('first line\nsecond line\nthird line\n');
      await t.waitFor(/^> review this: \[pasted 3 lines\]\s*$/m);
      expect(s.requests).toHaveLength(0);
      t.type(' thanks');
      t.keys('Enter');
      await t.waitFor(/got the block/);
      expect(s.requests).toHaveLength(1);
      expect(lastPrompt(s.requests[0].body)).toBe('review this: first line\nsecond line\nthird line thanks');
      // Ctrl+R finds the block by any of its lines, and Enter sends it whole again.
      t.keys('C-r');
      t.type('second');
      await t.waitFor(/\(reverse-i-search\)'second': second line \[3 lines\]/);
      t.keys('Enter');
      await t.waitFor(/got it again/);
      expect(lastPrompt(s.requests[1].body)).toBe('review this: first line\nsecond line\nthird line thanks');
      // A one-line paste is typed into the line as it is.
      t.paste('just one line');
      await t.waitFor(/^> just one line\s*$/m);
      t.keys('C-u', 'C-d');
      await t.waitFor(/EXIT=0/);
      await t.stopRecording();
      const written = readBytes(bytes);
      // The paste came bracketed, so mode 2004 was on (tmux brackets only then); leaving turned it off.
      expect(written).toContain('\x1b[?2004l');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers the model\'s choice question with a number', async () => {
    const question = { questions: [{ question: 'Which database?', header: 'Database', options: [{ label: 'Postgres', description: 'the server one' }, { label: 'SQLite' }] }] };
    const { term: t, server: s } = await start([callTool('ask_user_question', question), say('SQLite it is')]);
    send(t, 'set up storage');
    await waitForDialog(t, /Answer \(a number or your own words\):/);
    expect(t.screen()).toMatch(/\[question\] Database: Which database\?\n {2}1\) Postgres - the server one\n {2}2\) SQLite/);
    send(t, '2');
    await t.waitFor(/^SQLite it is$/m);
    expect(JSON.stringify(s.requests[1].body.messages.at(-1).content)).toContain('SQLite');
  });

  it('shows the plan of exit_plan_mode; no with feedback keeps planning, yes switches to edits mode', async () => {
    const { term: t, server: s } = await start(
      [callTool('exit_plan_mode', { plan: '1. change parse.ts\n2. run the tests' }), callTool('exit_plan_mode', { plan: '1. change parse.ts\n2. add a test\n3. run the tests' }), say('carrying it out')],
      { args: ['--permission-mode', 'plan'] },
    );
    send(t, 'plan the fix');
    await waitForDialog(t, /Approve this plan\? \[1-2, y = yes, n = keep planning\]:/);
    expect(t.screen()).toMatch(/\[plan\] The plan to approve:\n {2}\| 1\. change parse\.ts\n {2}\| 2\. run the tests\n1\) Yes, carry it out \(edits mode\) {2}2\) No, keep planning/);
    send(t, 'n');
    await t.waitFor(/What should change\? \(Enter for nothing\):/);
    send(t, 'add a test first');
    await waitForDialog(t, /\| 2\. add a test[\s\S]*Approve this plan\?[^\n]*\s*$/);
    expect(JSON.stringify(s.requests[1].body.messages.at(-1).content)).toContain('add a test first');
    send(t, 'y');
    const after = await t.waitFor(/^carrying it out$[\s\S]*\[claude-sonnet-5-5 - edits mode -/m);
    expect(after).toContain('[mode] Permission mode: edits (plan approved)');
  });

  it('runs the commands and keys of the Ink UI: /help, /status, /model, /permissions, /memory, /compact, Shift+Tab, !cmd, #note', async () => {
    const summary = ['Completed tasks', 'Key findings', 'Current state', 'Pending work', 'Important decisions'].map((h) => `## ${h}\n- noted`).join('\n');
    const { term: t, server: s } = await start([say('a first answer'), say(summary)]);
    send(t, '/help');
    await t.waitFor(/^\/status - /m);
    // The list is longer than the screen: read the scrollback too.
    const help = t.joinedHistory();
    for (const name of ['clear', 'compact', 'cost', 'exit', 'memory', 'model', 'permissions', 'resume']) expect(help).toMatch(new RegExp(`^/${name} - `, 'm'));
    t.keys('C-l');
    send(t, '/status');
    await t.waitFor(/Session[\s\S]*claude-sonnet-5-5/i);
    send(t, '/model');
    await t.waitFor(/^Small model: claude-haiku-5-5$/m);
    t.keys('BTab');
    await t.waitFor(/\[mode\] Permission mode: edits/);
    send(t, '/permissions');
    await t.waitFor(/^Permission mode: edits$/m);
    send(t, '#remember the tabs');
    await t.waitFor(/Noted in .*MEMORY\.md/);
    send(t, '/memory');
    await t.waitFor(/^> \/memory$[\s\S]*remember the tabs/m);
    t.keys('BTab');
    await t.waitFor(/\[mode\] Permission mode: plan/);
    t.keys('BTab');
    await t.waitFor(/\[mode\] Permission mode: ask/);
    // The user's own command runs in ask mode without a question, and the model sees it with the next prompt.
    send(t, '!echo shell-ok');
    await t.waitFor(/> shell-ok/);
    expect(t.screen()).not.toContain('[permission]');
    send(t, 'hello');
    await t.waitFor(/^a first answer$/m);
    expect(JSON.stringify(s.requests[0]!.body.messages)).toContain('<bash-input>echo shell-ok</bash-input>');
    send(t, '/compact');
    await t.waitFor(/^Compacted the conversation: \d+ → \d+ tokens\.$/m);
    // One line for one event.
    expect(t.screen()).not.toContain('[compact]');
  });

  it('Shift+Tab from a mode set by flag (auto) goes to ask, cycles ask → edits → plan, then back to the flag\'s mode', async () => {
    const { term: t } = await start([say('ok')], { args: ['--permission-mode', 'auto'] });
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      t.keys('BTab');
      const screen = await t.waitFor(new RegExp(`(?:\\[mode\\] Permission mode: \\w+[\\s\\S]*){${i + 1}}`));
      seen.push([...screen.matchAll(/\[mode\] Permission mode: (\w+)/g)].at(-1)![1]);
    }
    expect(seen).toEqual(['ask', 'edits', 'plan', 'auto', 'ask']);
  });

  it('keel sessions on a terminal hints keel --resume <id>', async () => {
    const ws = fixture.workspace();
    await recordSession(ws, 1, 'listed one');
    const term = fixture.terminal({ ws, width: 160, args: ['sessions'] });
    const screen = await term.waitFor(/EXIT=\d+/);
    expect(screen).toContain('listed one');
    expect(screen).toMatch(/^Resume one with: keel --resume <id>$/m);
    expect(screen).toContain('EXIT=0');
  });

  it('--continue resumes the latest session and prints its conversation once', async () => {
    const ws = fixture.workspace();
    await recordSession(ws, 1, 'the older one');
    await recordSession(ws, 2, 'the latest one');
    const server = await fixture.server([say('continued')]);
    const t = fixture.terminal({ ws, server, args: ['--ui', 'plain', '--continue'] });
    await t.waitFor(/Resumed session .* \(4 messages\)/);
    expect(t.screen()).toMatch(/^> the latest one$[\s\S]*^answer 1: [\s\S]*^> question 2$/m);
    send(t, 'go on');
    await t.waitFor(/^continued$/m);
    expect(JSON.stringify(server.requests[0].body.messages[0])).toContain('the latest one');
  });

  it('under NO_COLOR, a non-UTF-8 locale and 40 columns writes only ASCII and no colours, even from a command', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-ascii-'));
    try {
      const { term: t } = await start([callTool('bash', { command: "printf '\\033[31mred words\\033[0m\\n'" }), say('Caf\u00e9 \u2014 \u201cquoted\u201d \u2026 \u4f60\u597d')], {
        width: 40,
        env: { NO_COLOR: '1', LANG: 'C', LC_ALL: 'C' },
        args: ['--permission-mode', 'auto'],
      });
      const bytes = path.join(dir, 'bytes');
      t.record(bytes);
      send(t, 'colour me');
      await t.waitFor(/Caf\? - "quoted" \.\.\. \?\?\?\?/);
      expect(t.screen()).toContain('> red words');
      await t.stopRecording();
      const written = readBytes(bytes);
      expect(written).not.toMatch(/[^\x00-\x7f]/);
      expect(written).not.toMatch(/\x1b\[[0-9;]*m/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SIGTERM ends the UI, saves the session and switches bracketed paste off', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-term-'));
    try {
      const { term: t } = await start([]);
      const bytes = path.join(dir, 'bytes');
      t.record(bytes);
      const shell = execFileSync('tmux', ['-L', t.socket, 'list-panes', '-t', 'ui', '-F', '#{pane_pid}'], { encoding: 'utf8' }).trim();
      const keel = Number(execFileSync('ps', ['-o', 'pid=', '--ppid', shell], { encoding: 'utf8' }).trim().split('\n')[0]);
      expect(keel).toBeGreaterThan(0);
      process.kill(keel, 'SIGTERM');
      const end = await t.waitFor(/EXIT=\d+/);
      expect(end).toContain('EXIT=143');
      expect(end).toMatch(/Session saved\. Resume it with: keel --resume/);
      await t.stopRecording();
      expect(readBytes(bytes)).toContain('\x1b[?2004l');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints retries, server web searches, the todo list and policy denials as lines of their own', async () => {
    const result = { type: 'web_search_result', url: 'https://nodejs.org/en/blog/release/v22.0.0', title: 'Node.js 22 is now available!', encrypted_content: 'Enc', page_age: 'April 24, 2024' };
    const searched = {
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'node 22 v8' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [result] },
        { type: 'text', text: 'Node 22 ships V8 12.4.' },
      ],
    };
    const todos = { todos: [{ content: 'Read the code', status: 'completed' }, { content: 'Fix the parser', status: 'in_progress' }, { content: 'Run the tests', status: 'pending' }] };
    const { term: t } = await start(
      [{ status: 529 }, searched as ScriptStep, callTool('todo_write', todos), say('listed'), callTool('bash', { command: 'rm -rf build' }), say('could not')],
      { prepare: (w) => writeFileSync(path.join(w.home, 'agent.config.ts'), 'export default { retry: { baseDelayMs: 1 } };\n'), args: ['--disallowedTools', 'Bash(rm:*)'] },
    );
    send(t, 'which v8?');
    await t.waitFor(/^Node 22 ships V8 12\.4\.$/m);
    const first = t.screen();
    expect(first).toMatch(/^\[retry\] Retrying in 1 ms \(1\/\d+\): .*529/m);
    expect(first).toMatch(/^\[web search\] "node 22 v8": 1 result\n {2}- Node\.js 22 is now available! <https:\/\/nodejs\.org\/en\/blog\/release\/v22\.0\.0>$/m);
    send(t, 'plan it');
    await t.waitFor(/^listed$/m);
    expect(t.screen()).toMatch(/^\[todos\]\n {2}\[x\] Read the code\n {2}\[>\] Fix the parser\n {2}\[ \] Run the tests$/m);
    send(t, 'clean up');
    await t.waitFor(/^could not$/m);
    expect(t.screen()).toMatch(/^\[denied\] bash: rm -rf build: .*denied/im);
  });
});
