import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say, startAnthropicServer, type ScriptStep, type ScriptedServer } from '../helpers/anthropic-server.js';
import { hasTmux, startKeelTerminal, type Terminal } from '../helpers/tmux.js';
import { recordSession } from '../helpers/ui-fixtures.js';
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

async function start(script: ScriptStep[], opts: { args?: string[]; prepare?: (ws: Workspace) => Promise<void> | void; waitFor?: RegExp; flag?: boolean } = {}) {
  ws = makeWorkspace({ git: true });
  await opts.prepare?.(ws);
  server = await startAnthropicServer(script);
  term = startKeelTerminal({ cwd: ws.dir, args: [...(opts.flag === false ? [] : ['--ui', 'plain']), ...(opts.args ?? [])], env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url } });
  await term.waitFor(opts.waitFor ?? /^> ?$/m);
  return { ws, server, term };
}

function send(t: Terminal, text: string): void {
  t.type(text);
  t.keys('Enter');
}

describe.skipIf(!hasTmux)('the plain UI (--ui plain) in a terminal', () => {
  it('chosen by the user config: streams an answer, runs /cost, recalls history with Up, and Ctrl+D exits with the session saved', async () => {
    const { term: t, ws: w } = await start([say('the plain answer')], { flag: false, prepare: (w) => writeFileSync(path.join(w.home, 'agent.config.ts'), "export default { ui: 'plain' };\n") });
    send(t, 'hello plain');
    await t.waitFor(/the plain answer/);
    expect(t.screen()).toMatch(/\[claude-sonnet-5-5 - ask mode - \d+% context - \$[\d.]+\]/);
    send(t, '/cost');
    await t.waitFor(/Total cost:/);
    t.keys('Up', 'Up');
    await t.waitFor(/^> hello plain$/m);
    t.keys('C-u', 'C-d');
    const end = await t.waitFor(/EXIT=\d+/);
    expect(end).toMatch(/Session saved\. Resume it with: keel --resume [\w-]+/);
    expect(end).toContain('EXIT=0');
    expect(existsSync(path.join(w.home, 'history'))).toBe(true);
  });

  it('approves one permission question and denies another', async () => {
    const { term: t, server: s } = await start([callTool('bash', { command: 'echo plain-$((1+1))' }), say('one'), callTool('bash', { command: 'echo not-run' }), say('two')]);
    send(t, 'first');
    await t.waitFor(/Answer \[1-4/);
    expect(t.screen()).toMatch(/1\) Allow once {2}2\) Allow this session {2}3\) Deny {2}4\) Deny this session/);
    send(t, 'y');
    await t.waitFor(/^one$/m);
    expect(t.screen()).toContain('| plain-2');
    send(t, 'second');
    await t.waitFor(/Answer \[1-4/);
    send(t, '3');
    await t.waitFor(/^two$/m);
    expect(t.screen()).toContain('[permission] bash: echo not-run: Deny');
    expect(s.requests[3].body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', is_error: true });
  });

  it('Esc interrupts a long stream', async () => {
    const { term: t } = await start([say('A long plain answer. '.repeat(5), { beforeEvent: (ctx) => (ctx.index >= 5 ? ctx.closed : undefined) }), say('next one')]);
    send(t, 'go long');
    await t.waitFor(/A long plain answer/);
    t.keys('Escape');
    await t.waitFor(/\[interrupted\]/);
    send(t, 'again');
    await t.waitFor(/next one/);
  });

  it('asks whether to trust the folder; no keeps its settings out', async () => {
    const { term: t, ws: w } = await start([say('ok')], {
      prepare: (w) => void w.write('agent.config.ts', "export default { model: 'project-model' };\n"),
      waitFor: /Trust this folder \(remembered\)\? \[y\/n\]/,
    });
    expect(t.screen()).toContain('agent.config.ts');
    send(t, 'n');
    await t.waitFor(/^> ?$/m);
    send(t, 'hi');
    await t.waitFor(/^ok$/m);
    expect(t.screen()).toContain('[claude-sonnet-5-5 -');
    expect(existsSync(path.join(w.home, 'trusted-folders.json'))).toBe(false);
    t.keys('C-c');
    await t.waitFor(/press Ctrl\+C again to exit/);
    t.keys('C-c');
    expect(await t.waitFor(/EXIT=\d+/)).toContain('EXIT=0');
  });

  it('asks whether to trust the folder; yes is remembered and loads its settings', async () => {
    const { term: t, ws: w } = await start([say('ok')], {
      prepare: (w) => void w.write('agent.config.ts', "export default { model: 'project-model' };\n"),
      waitFor: /\[y\/n\]/,
    });
    send(t, 'y');
    await t.waitFor(/^> ?$/m);
    send(t, 'hi');
    await t.waitFor(/\[project-model -/);
    expect(JSON.parse(readFileSync(path.join(w.home, 'trusted-folders.json'), 'utf8')).folders).toEqual([realpathSync(w.dir)]);
  });

  it('sends a prompt given on the command line first', async () => {
    const { term: t } = await start([say('plain argument answered')], { args: ['from argv'], waitFor: /plain argument answered/ });
    expect(t.screen()).toContain('> from argv');
  });

  it('keel --resume without an id lists the sessions, filters by text and resumes the one picked', async () => {
    ws = makeWorkspace({ git: true });
    await recordSession(ws, 1, 'about apples');
    await recordSession(ws, 1, 'about pears');
    server = await startAnthropicServer([say('resumed')]);
    term = startKeelTerminal({ cwd: ws.dir, args: ['--ui', 'plain', '--resume'], env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url } });
    const t = term;
    await t.waitFor(/Number to resume/);
    expect(t.screen()).toMatch(/1\) .*about pears[\s\S]*2\) .*about apples/);
    send(t, 'apples');
    await t.waitFor(/Sessions matching "apples"/);
    send(t, '1');
    await t.waitFor(/Resumed session .* \(2 messages\)/);
    send(t, 'continue');
    await t.waitFor(/^resumed$/m);
    expect(JSON.stringify(server.requests[0].body.messages[0])).toContain('about apples');
  });
});
