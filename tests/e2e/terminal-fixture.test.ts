/**
 * The UI tests' terminal fixture (tests/helpers/terminal-fixture.ts) removes what it made after each test: the tmux
 * server running keel, the scripted server, the workspace and temp folders; after a failing test too, and when one
 * of its own steps fails.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';

const fixture = terminalFixture();

/** What a test held, checked by the test after it (afterEach has run in between). */
const held: { socket?: string; server?: ScriptedServer; folders: string[] } = { folders: [] };

const tmuxRunning = (socket: string) => spawnSync('tmux', ['-L', socket, 'has-session']).status === 0;
/** Whether the scripted server still takes requests (its port may be another process's by now: its own record says). */
async function serverAnswers(server: ScriptedServer): Promise<boolean> {
  const before = server.requests.length;
  await fetch(`${server.url}/v1/models`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  return server.requests.length > before;
}

describe.skipIf(!hasTmux)('the terminal fixture', () => {
  it.fails('a test that fails while keel runs…', async () => {
    const { ws, server, term } = await fixture.start([say('unused')], { args: ['--ui', 'plain'], ready: /^> ?$/m });
    // (An assertion here would prove nothing: this test passes by failing. The one after checks what it held.)
    Object.assign(held, { socket: term.socket, server, folders: [ws.dir, ws.home, fixture.tempDir()] });
    throw new Error('the test fails here');
  });

  it('…leaves no tmux server, scripted server or folder behind', async () => {
    expect(held.socket).toBeDefined();
    expect(tmuxRunning(held.socket!)).toBe(false);
    expect(await serverAnswers(held.server!)).toBe(false);
    expect(held.folders.filter((f) => existsSync(f))).toEqual([]);
  });

  it('a step of the clean-up that fails stops none of the others, and its error is reported after them', async () => {
    const ws = fixture.workspace();
    const server = await fixture.server();
    const term = fixture.terminal({ ws, server, args: ['--ui', 'plain'] });
    await term.waitFor(/^> ?$/m);
    // What the checks below see gone is there first.
    expect(tmuxRunning(term.socket)).toBe(true);
    expect(await serverAnswers(server)).toBe(true);
    const close = server.close;
    server.close = () => close().then(() => Promise.reject(new Error('the server would not close')));
    await expect(fixture.cleanup()).rejects.toThrow('the server would not close');
    expect(tmuxRunning(term.socket)).toBe(false);
    expect(existsSync(ws.dir)).toBe(false);
    expect(await serverAnswers(server)).toBe(false);
  });
});
