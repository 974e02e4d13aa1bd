/** The output style and the new commands in the Ink UI, in a real terminal (tmux, private socket). */
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';

const fixture = terminalFixture();

describe.skipIf(!hasTmux)('Claude Code commands in the Ink UI', () => {
  it('/output-style switches the style of the next request; /context and /todos print; /help lists them', async () => {
    const { server, term: t } = await fixture.start([say('first answer'), say('second answer')], { height: 50 });
    t.type('hello');
    t.keys('Enter');
    await t.waitFor(/first answer/);
    t.type('/output-style learning');
    t.keys('Enter');
    await t.waitFor(/Output style: learning/);
    t.type('and now?');
    t.keys('Enter');
    await t.waitFor(/second answer/);
    const systems = server.messageRequests().map((r) => (r.body.system as Array<{ text: string }>).map((b) => b.text).join('\n'));
    expect(systems[0]).toContain('Be brief');
    expect(systems[1]).toContain('Output style: learning');
    expect(systems[1]).not.toContain('Be brief');
    t.type('/context');
    t.keys('Enter');
    await t.waitFor(/Context: about [\d.]+k? of 200k tokens[\s\S]*Messages\s+\d+ tokens/);
    t.type('/todos');
    t.keys('Enter');
    await t.waitFor(/No tasks/);
    t.type('/help');
    t.keys('Enter');
    const help = await t.waitFor(/\/add-dir\s+let the tools[\s\S]*\/todos\s+show/, { history: true });
    for (const name of ['add-dir', 'agents', 'context', 'export', 'hooks', 'init', 'login', 'output-style', 'review']) expect(help).toContain(`/${name}`);
  });
});

describe.skipIf(!hasTmux)('/login in the UIs', () => {
  for (const ui of ['ink', 'plain'] as const) {
    it(`${ui}: asks for the key without echoing it, checks it, stores it, and the session's next request uses it`, async () => {
      const { readFileSync } = await import('node:fs');
      const path = await import('node:path');
      const { apiKeyOf } = await import('../helpers/anthropic-server.js');
      const { ws, server, term: t } = await fixture.start([say('with the new key')], { args: ui === 'plain' ? ['--ui', 'plain'] : [], env: { ANTHROPIC_API_KEY: 'old-key' }, ready: ui === 'plain' ? /^> ?$/m : /ask mode/ });
      t.type('/login');
      t.keys('Enter');
      await t.waitFor(/Anthropic API key \(stored in/);
      t.type('sk-secret-123');
      t.keys('Enter');
      // The line may wrap at the terminal's width (the plain UI breaks inside words, Ink at a space it drops): read
      // it with the breaks taken out, any space possibly gone.
      const screen = await t.waitFor(/Key stored in[\s\S]*?n\n?o\n?w\n?\./);
      expect(screen.replace(/\n/g, '')).toMatch(/Key stored in .*auth\.json\s*\(checked\s*with\s*the\s*API\);\s*this\s*session\s*uses\s*it\s*now\./);
      // Never echoed: not on the screen nor in the scrollback.
      expect(t.history()).not.toContain('sk-secret-123');
      expect(JSON.parse(readFileSync(path.join(ws.home, 'auth.json'), 'utf8'))).toEqual({ apiKey: 'sk-secret-123' });
      t.type('hi');
      t.keys('Enter');
      await t.waitFor(/with the new key/);
      expect(apiKeyOf(server.messageRequests()[0]!)).toBe('sk-secret-123');
    });
  }
});
