/** Custom slash commands in the Ink UI, in a real terminal: /help lists them with their hint, Tab completes them, Enter runs them. */
import { describe, expect, it } from 'vitest';
import { plainMessages, say } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';

const fixture = terminalFixture();

describe.skipIf(!hasTmux)('custom commands in the Ink UI', () => {
  it('/help lists a custom command with its argument hint; Tab completes it; Enter sends the expanded prompt', async () => {
    const ws = fixture.workspace();
    ws.write('.claude/commands/greet.md', '---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS.\n');
    ws.write('.claude/commands/frontend/component.md', '---\ndescription: Make a component\nargument-hint: [name]\n---\nMake $1.\n');
    const server = await fixture.server([say('Hello, Bob!')]);
    const term = fixture.terminal({ ws, server, args: ['--trust'], width: 120, env: { HOME: ws.home } });
    await term.waitFor(/ask mode/);
    term.type('/help');
    term.keys('Enter');
    await term.waitFor(/\/greet\s+<name> — Greet someone \(project\)/, { history: true });
    await term.waitFor(/\/frontend:component\s+\[name\] — Make a component \(project\)/, { history: true });
    term.type('/gre');
    term.keys('Tab');
    await term.waitFor(/\/greet\s*$/m);
    term.type('Bob');
    term.keys('Enter');
    await term.waitFor(/Hello, Bob!/, { history: true });
    expect(plainMessages(server.messageRequests()[0]!.body.messages)[0]!.content).toBe('Say hello to Bob.');
    // The answer streamed into the transcript is not printed again when the command returns it.
    await term.waitFor(/0% context · \$0\.0001/);
    expect(term.history().match(/Hello, Bob!/g)).toHaveLength(1);
    expect(term.history()).toContain('/greet Bob');
  });

  it('the plain UI: /help lists it with its hint, a namespaced command runs, and its answer is shown once', async () => {
    const ws = fixture.workspace();
    ws.write('.claude/commands/frontend/component.md', '---\ndescription: Make a component\nargument-hint: [name]\n---\nMake a component named $1.\n');
    const server = await fixture.server([say('Component ready.')]);
    const term = fixture.terminal({ ws, server, args: ['--ui', 'plain', '--trust'], width: 120, env: { HOME: ws.home } });
    await term.waitFor(/^> ?$/m);
    term.type('/help');
    term.keys('Enter');
    await term.waitFor(/\/frontend:component - \[name\] — Make a component \(project\)/, { history: true });
    term.type('/frontend:component Button');
    term.keys('Enter');
    await term.waitFor(/Component ready\.[\s\S]*^> ?$/m, { history: true });
    expect(plainMessages(server.messageRequests()[0]!.body.messages)[0]!.content).toBe('Make a component named Button.');
    expect(term.history().match(/Component ready\./g)).toHaveLength(1);
  });
});
