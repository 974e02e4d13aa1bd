/** keel on a real terminal (tmux, private socket) outside the UIs: one-line refusals, retry notes, keel login. */
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';

const fixture = terminalFixture();

describe.skipIf(!hasTmux)('keel on a terminal', () => {
  it('a preset without an interactive UI says so in one line on a terminal, and exits 2', async () => {
    const term = fixture.terminal({ ws: fixture.workspace(), width: 160, height: 20, args: ['--preset', 'headless'], env: { ANTHROPIC_API_KEY: 'x' } });
    const screen = await term.waitFor(/EXIT=\d+/);
    expect(screen).toContain('keel: the preset "headless" has no interactive UI (plugin ui-ink or ui-plain); run keel -p "…" for a headless run');
    expect(screen).toMatch(/EXIT=2/);
  });

  it('--ui with an unknown name names the flag and the UIs there are, and exits 2', async () => {
    const term = fixture.terminal({ ws: fixture.workspace(), width: 160, height: 20, args: ['--ui', 'fancy'], env: { ANTHROPIC_API_KEY: 'x' } });
    const screen = await term.waitFor(/EXIT=\d+/);
    expect(screen).toContain('keel: --ui: no UI named "fancy" in preset "default" (its UIs: ink, plain)');
    expect(screen).toMatch(/EXIT=2/);
  });

  it('a headless run on a terminal shows each retry wait on stderr', async () => {
    const ws = fixture.workspace();
    const server = await fixture.server([{ status: 529 }, say('after the wait')]);
    ws.write('agent.config.ts', 'export default { retry: { baseDelayMs: 1 } };\n');
    const term = fixture.terminal({ ws, server, width: 160, height: 20, args: ['-p', 'hi', '--config', 'agent.config.ts'], env: { ANTHROPIC_API_KEY: 'x' } });
    const screen = await term.waitFor(/EXIT=\d+/);
    expect(screen).toMatch(/keel: Retrying in 1 ms… \(1\/3\): .*529/);
    expect(screen).toContain('after the wait');
    expect(screen).toMatch(/EXIT=0/);
  });

  it('keel login reads the key without echoing it and stores it 0600', async () => {
    const ws = fixture.workspace();
    const server = await fixture.server();
    const term = fixture.terminal({ ws, server, width: 120, height: 20, args: ['login'], env: { ANTHROPIC_API_KEY: undefined } });
    await term.waitFor(/Anthropic API key:/);
    term.type('sk-secret-typed');
    term.keys('Enter');
    const screen = await term.waitFor(/EXIT=\d+/);
    expect(screen).not.toContain('sk-secret-typed');
    expect(screen).toMatch(/Key stored in .*auth\.json/);
    expect(screen).toMatch(/EXIT=0/);
    expect(JSON.parse(readFileSync(`${ws.home}/auth.json`, 'utf8'))).toEqual({ apiKey: 'sk-secret-typed' });
    expect((statSync(`${ws.home}/auth.json`).mode & 0o777).toString(8)).toBe('600');
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/models']);
  });
});
