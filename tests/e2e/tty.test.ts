import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { say, startAnthropicServer, type ScriptedServer } from '../helpers/anthropic-server.js';
import { KEEL_BIN } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';
import { until } from '../helpers/until.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
/** A private tmux server for this file, never the user's. */
const SOCKET = `keel-tty-${process.pid}-${Date.now()}`;
let ws: Workspace | undefined;
let tmuxSession: string | undefined;
let server: ScriptedServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  if (tmuxSession) spawnSync('tmux', ['-L', SOCKET, 'kill-session', '-t', tmuxSession]);
  ws?.cleanup();
  tmuxSession = undefined;
  ws = undefined;
});

afterAll(() => {
  spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
});

async function screenUntil(session: string, pattern: RegExp): Promise<string> {
  let screen = '';
  try {
    return await until(() => {
      screen = execFileSync('tmux', ['-L', SOCKET, 'capture-pane', '-p', '-t', session]).toString();
      return pattern.test(screen) && screen;
    }, `the screen to match ${pattern}`, { everyMs: 50 });
  } catch (err) {
    throw new Error(`${(err as Error).message}:\n${screen}`);
  }
}

describe.skipIf(!hasTmux)('keel on a terminal', () => {
  it('a preset without an interactive UI says so in one line on a terminal, and exits 2', async () => {
    ws = makeWorkspace({ git: true });
    tmuxSession = `keel-tty-${process.pid}-${Date.now()}`;
    const command = `KEEL_HOME=${ws.home} ANTHROPIC_API_KEY=x ${process.execPath} ${KEEL_BIN} --preset headless; echo "EXIT=$?"`;
    execFileSync('tmux', ['-L', SOCKET, 'new-session', '-d', '-s', tmuxSession, '-x', '160', '-y', '20', '-c', ws.dir, 'bash', '--norc', '-c', `${command}; sleep 30`]);
    const screen = await screenUntil(tmuxSession, /EXIT=\d+/);
    expect(screen).toContain('keel: the preset "headless" has no interactive UI (plugin ui-ink or ui-plain); run keel -p "…" for a headless run');
    expect(screen).toMatch(/EXIT=2/);
  });

  it('--ui with an unknown name names the flag and the UIs there are, and exits 2', async () => {
    ws = makeWorkspace({ git: true });
    tmuxSession = `keel-tty-ui-${process.pid}-${Date.now()}`;
    const command = `KEEL_HOME=${ws.home} ANTHROPIC_API_KEY=x ${process.execPath} ${KEEL_BIN} --ui fancy; echo "EXIT=$?"`;
    execFileSync('tmux', ['-L', SOCKET, 'new-session', '-d', '-s', tmuxSession, '-x', '160', '-y', '20', '-c', ws.dir, 'bash', '--norc', '-c', `${command}; sleep 30`]);
    const screen = await screenUntil(tmuxSession, /EXIT=\d+/);
    expect(screen).toContain('keel: --ui: no UI named "fancy" in preset "default" (its UIs: ink, plain)');
    expect(screen).toMatch(/EXIT=2/);
  });

  it('a headless run on a terminal shows each retry wait on stderr', async () => {
    ws = makeWorkspace({ git: true });
    server = await startAnthropicServer([{ status: 529 }, say('after the wait')]);
    ws.write('agent.config.ts', 'export default { retry: { baseDelayMs: 1 } };\n');
    tmuxSession = `keel-retry-${process.pid}-${Date.now()}`;
    const command = `KEEL_HOME=${ws.home} ANTHROPIC_API_KEY=x ANTHROPIC_BASE_URL=${server.url} ${process.execPath} ${KEEL_BIN} -p hi --config agent.config.ts; echo "EXIT=$?"`;
    execFileSync('tmux', ['-L', SOCKET, 'new-session', '-d', '-s', tmuxSession, '-x', '160', '-y', '20', '-c', ws.dir, 'bash', '--norc', '-c', `${command}; sleep 30`]);
    const screen = await screenUntil(tmuxSession, /EXIT=\d+/);
    expect(screen).toMatch(/keel: Retrying in 1 ms… \(1\/3\): .*529/);
    expect(screen).toContain('after the wait');
    expect(screen).toMatch(/EXIT=0/);
  });

  it('keel login reads the key without echoing it and stores it 0600', async () => {
    ws = makeWorkspace({ git: true });
    tmuxSession = `keel-login-${process.pid}-${Date.now()}`;
    server = await startAnthropicServer();
    const command = `KEEL_HOME=${ws.home} ANTHROPIC_BASE_URL=${server.url} ${process.execPath} ${KEEL_BIN} login; echo "EXIT=$?"`;
    execFileSync('tmux', ['-L', SOCKET, 'new-session', '-d', '-s', tmuxSession, '-x', '120', '-y', '20', '-c', ws.dir, 'bash', '--norc', '-c', `${command}; sleep 30`]);
    await screenUntil(tmuxSession, /Anthropic API key:/);
    execFileSync('tmux', ['-L', SOCKET, 'send-keys', '-t', tmuxSession, 'sk-secret-typed', 'Enter']);
    const screen = await screenUntil(tmuxSession, /EXIT=\d+/);
    expect(screen).not.toContain('sk-secret-typed');
    expect(screen).toMatch(/Key stored in .*auth\.json/);
    expect(screen).toMatch(/EXIT=0/);
    expect(JSON.parse(readFileSync(`${ws.home}/auth.json`, 'utf8'))).toEqual({ apiKey: 'sk-secret-typed' });
    expect((statSync(`${ws.home}/auth.json`).mode & 0o777).toString(8)).toBe('600');
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/models']);
  });
});
