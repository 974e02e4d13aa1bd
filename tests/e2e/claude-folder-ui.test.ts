/** The output style and the new commands in the Ink UI, in a real terminal (tmux, private socket). */
import { afterEach, describe, expect, it } from 'vitest';
import { say, startAnthropicServer, type ScriptedServer } from '../helpers/anthropic-server.js';
import { hasTmux, startKeelTerminal, type Terminal } from '../helpers/tmux.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace | undefined;
let term: Terminal | undefined;
let server: ScriptedServer | undefined;

afterEach(async () => {
  term?.kill();
  await server?.close();
  ws?.cleanup();
  term = undefined;
  server = undefined;
  ws = undefined;
});

describe.skipIf(!hasTmux)('Claude Code commands in the Ink UI', () => {
  it('/output-style switches the style of the next request; /context and /todos print; /help lists them', async () => {
    ws = makeWorkspace({ git: true });
    server = await startAnthropicServer([say('first answer'), say('second answer')]);
    term = startKeelTerminal({ cwd: ws.dir, height: 50, env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url } });
    const t = term;
    await t.waitFor(/ask mode/);
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
    await t.waitFor(/Context: about [\d.]+k? of 200k tokens/);
    expect(t.screen()).toMatch(/Messages\s+\d+ tokens/);
    t.type('/todos');
    t.keys('Enter');
    await t.waitFor(/No tasks/);
    t.type('/help');
    t.keys('Enter');
    const help = await t.waitFor(/\/add-dir\s+let the tools[\s\S]*\/todos\s+show/, { history: true });
    for (const name of ['add-dir', 'agents', 'context', 'export', 'hooks', 'init', 'login', 'output-style', 'review']) expect(help).toContain(`/${name}`);
  });
});
