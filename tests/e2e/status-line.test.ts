/**
 * The status line (plugin status-line): Claude Code's `statusLine` setting runs a command whose first line of
 * output shows under the prompt in both UIs, fed a JSON object on stdin; an untrusted project's never runs.
 */
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptStep } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { until } from '../helpers/until.js';
import { hasTmux, waitForDialog } from '../helpers/tmux.js';
import type { Workspace } from '../helpers/workspace.js';

const fixture = terminalFixture();

/**
 * A status script in KEEL_HOME: saves what it read on stdin to `seen.json` and prints a green line naming the
 * model's display name and the folder, then a second line that must not be shown.
 */
function statusScript(w: Workspace): string {
  const file = path.join(w.home, 'status.mjs');
  writeFileSync(
    file,
    `import { writeFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  writeFileSync(${JSON.stringify(path.join(w.home, 'seen.json'))}, input);
  const s = JSON.parse(input);
  process.stdout.write('\\x1b[32mSTATUS ' + s.model.display_name + ' in ' + s.workspace.current_dir.split('/').pop() + ' mode=' + s.permission_mode + ' lines=' + s.cost.total_lines_added + '/' + s.cost.total_lines_removed + '\\x1b[0m\\nsecond line\\n');
});
`,
  );
  return `node ${JSON.stringify(file)}`;
}

function start(script: ScriptStep[], opts: { args?: string[]; prepare: (w: Workspace) => void; waitFor?: RegExp }) {
  return fixture.start(script, { args: opts.args, prepare: opts.prepare, ready: opts.waitFor ?? /ask mode|^> ?$/m });
}

function userStatusLine(w: Workspace, command: string): void {
  writeFileSync(path.join(w.home, 'agent.config.ts'), `export default { statusLine: { type: 'command', command: ${JSON.stringify(command)} } };\n`);
}

describe.skipIf(!hasTmux)('the status line in a terminal', () => {
  it('the Ink UI shows the first line of the command under the prompt, colours kept, and the command gets the JSON on stdin', async () => {
    const script = [say('answered'), callTool('write_file', { path: 'notes.txt', content: 'a\nb\nc\n' }), say('written')];
    const { term: t, ws: w } = await start(script, { prepare: (w) => userStatusLine(w, statusScript(w)) });
    const screen = await t.waitFor(/STATUS Sonnet 5\.5 in project mode=ask/);
    // Under the prompt (the › line), above the footer; the second line of output is not shown.
    const lines = screen.split('\n');
    const at = lines.findIndex((l) => l.includes('STATUS Sonnet'));
    expect(lines.slice(0, at).some((l) => /^\s*[›>]/.test(l))).toBe(true);
    expect(lines.slice(at + 1).join('\n')).toMatch(/ask mode/);
    expect(screen).not.toContain('second line');
    expect(t.styledScreen()).toMatch(/\x1b\[32m(\x1b\[\d+m)*STATUS Sonnet/);
    const seen = JSON.parse(readFileSync(path.join(w.home, 'seen.json'), 'utf8'));
    expect(seen).toMatchObject({
      model: { id: 'claude-sonnet-5-5', display_name: 'Sonnet 5.5' },
      workspace: { current_dir: realpathSync(w.dir), project_dir: realpathSync(w.dir) },
      cost: { total_cost_usd: 0, total_lines_added: 0, total_lines_removed: 0 },
      permission_mode: 'ask',
    });
    expect(typeof seen.session_id).toBe('string');
    expect(seen.transcript_path).toMatch(new RegExp(`${seen.session_id}\\.jsonl$`));
    expect(typeof seen.version).toBe('string');
    expect(typeof seen.cost.total_duration_ms).toBe('number');
    // Shift+Tab changes the mode: the command runs again and says so.
    t.keys('BTab');
    await t.waitFor(/STATUS Sonnet 5\.5 in project mode=edits/);
    // After a turn the command is told the session's cost.
    t.type('hello');
    t.keys('Enter');
    await t.waitFor(/answered/);
    await t.waitFor(/STATUS Sonnet 5\.5 in project mode=edits/);
    // The file tools' own counts of the lines they changed reach the command (write_file: three new lines).
    t.type('write notes');
    t.keys('Enter');
    await t.waitFor(/written/);
    await t.waitFor(/mode=edits lines=3\/0/);
  });

  it('the plain UI prints the line (uncoloured), and a project statusLine from .claude/settings.json runs in a trusted project', async () => {
    const { term: t, ws: w } = await start([say('plain answer')], {
      args: ['--ui', 'plain', '--trust'],
      prepare: (w) => w.write('.claude/settings.json', JSON.stringify({ statusLine: { type: 'command', command: statusScript(w), padding: 2 } })),
    });
    await t.waitFor(/^ {2}STATUS Sonnet 5\.5 in project mode=ask lines=0\/0$/m);
    // The plain UI colours nothing: the command's colours are taken out.
    expect(t.styledScreen()).not.toMatch(/\x1b\[32m/);
    t.type('hi');
    t.keys('Enter');
    await t.waitFor(/plain answer/);
    expect(JSON.parse(readFileSync(path.join(w.home, 'seen.json'), 'utf8')).workspace.project_dir).toBe(realpathSync(w.dir));
  });

  it("an untrusted project's statusLine never runs, from .claude/settings.json or agent.config.ts (canary outside the workspace)", async () => {
    const canary = path.join(fixture.tempDir('keel-canary-'), 'status-ran');
    const { term: t } = await start([say('untrusted answer')], {
      prepare: (w) => {
        // The user's own status line: shown, it is the one in effect (a project's would take its place).
        userStatusLine(w, 'echo USER-STATUS');
        w.write('.claude/settings.json', JSON.stringify({ statusLine: { type: 'command', command: `touch ${canary}; echo PROJECT-STATUS` } }));
        w.write('agent.config.ts', `export default { statusLine: { type: 'command', command: ${JSON.stringify(`touch ${canary}; echo PROJECT-STATUS`)} } };\n`);
      },
      // The whole dialog, its answers included, before a key is pressed.
      waitFor: /Do you trust the files in this folder\?[\s\S]*No, continue without its settings/,
    });
    await waitForDialog(t, /Do you trust the files in this folder\?/);
    t.keys('n');
    await t.waitFor(/ask mode/);
    t.type('hello');
    t.keys('Enter');
    await t.waitFor(/untrusted answer/);
    // The status machinery ran, with the user's command: the project's is not the one in effect.
    expect(await t.waitFor(/USER-STATUS/)).not.toContain('PROJECT-STATUS');
    expect(existsSync(canary)).toBe(false);
  });

  it('a failing command shows nothing and logs once with --verbose', async () => {
    const { term: t, ws: w } = await start([say('fine')], {
      args: ['--ui', 'plain', '--verbose'],
      waitFor: /Ctrl\+D to exit/,
      prepare: (w) => userStatusLine(w, `echo attempt >> ${JSON.stringify(path.join(w.home, 'attempts'))}; echo BROKEN; exit 3`),
    });
    t.type('hi');
    t.keys('Enter');
    await t.waitFor(/fine/);
    await t.waitFor(/statusLine command failed \(it exited with code 3\)/, { history: true });
    // It runs again after the turn (and fails again), and is reported once.
    const attempts = () => (existsSync(path.join(w.home, 'attempts')) ? readFileSync(path.join(w.home, 'attempts'), 'utf8').split('\n').filter(Boolean).length : 0);
    await until(() => attempts() > 1, 'the status command to run again after the turn');
    t.keys('Enter');
    await t.waitFor(/^> ?$/m);
    expect(t.history()).not.toMatch(/^\s*BROKEN\s*$/m);
    expect(t.history().match(/statusLine command failed/g)).toHaveLength(1);
  });
});

describe('the status line in headless runs', () => {
  it('never runs with -p (no UI shows it)', async () => {
    const ws = fixture.workspace();
    const server = await fixture.server([say('headless')]);
    const canary = path.join(fixture.tempDir('keel-canary-'), 'status-ran');
    userStatusLine(ws, `touch ${canary}`);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url } });
    expect(run).toMatchObject({ code: 0, stdout: 'headless\n' });
    expect(existsSync(canary)).toBe(false);
  });
});
