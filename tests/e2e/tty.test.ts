import { execFileSync, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { KEEL_BIN } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
let ws: Workspace | undefined;
let tmuxSession: string | undefined;

afterEach(() => {
  if (tmuxSession) spawnSync('tmux', ['kill-session', '-t', tmuxSession]);
  ws?.cleanup();
  tmuxSession = undefined;
  ws = undefined;
});

async function screenUntil(session: string, pattern: RegExp): Promise<string> {
  let screen = '';
  for (let i = 0; i < 200; i++) {
    screen = execFileSync('tmux', ['capture-pane', '-p', '-t', session]).toString();
    if (pattern.test(screen)) return screen;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`screen never matched ${pattern}:\n${screen}`);
}

describe.skipIf(!hasTmux)('keel on a terminal', () => {
  it('says in one line that the interactive UI is not in this build, and exits 2', async () => {
    ws = makeWorkspace({ git: true });
    tmuxSession = `keel-tty-${process.pid}-${Date.now()}`;
    const command = `KEEL_HOME=${ws.home} ANTHROPIC_API_KEY=x ${process.execPath} ${KEEL_BIN}; echo "EXIT=$?"`;
    execFileSync('tmux', ['new-session', '-d', '-s', tmuxSession, '-x', '120', '-y', '20', '-c', ws.dir, 'bash', '--norc', '-c', `${command}; sleep 30`]);
    const screen = await screenUntil(tmuxSession, /EXIT=\d+/);
    expect(screen).toContain('keel: the interactive UI is not part of this build yet; run keel -p "…" for a headless run');
    expect(screen).toMatch(/EXIT=2/);
  });
});
