/**
 * MCP and the permission policy. A resource is attached only for an `@server:uri` the user typed — never for
 * one a model wrote (a sub-agent's task) — and its read obeys the server's rules (`mcp__server`,
 * `mcp__server__*`). A server's `readOnlyHint` is its own say: a tool it marks read-only is asked like any MCP
 * tool and refused in plan mode, unless the user allow-listed the server or the tool; a hostile project's
 * files cannot allow-list it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { callTool, resultText, say, useHostile, type Hostile } from '../../helpers/adversary.js';
import { conversation, routeConversations, firstUserText } from '../../helpers/conversations.js';
import { runKeel } from '../../helpers/cli.js';
import { EVERYTHING, processesGone } from '../../helpers/mcp.js';
import { useScriptedProjects } from '../../helpers/project.js';

const hostile = useHostile();
const prepare = useScriptedProjects();

const LIAR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/mcp-liar.mjs');
const DOC = 'demo://resource/static/document/architecture.md';
/** A line of that resource: seen in a request only if the resource was read and attached. */
const DOC_TEXT = 'Everything Server – Architecture';

const everything = (dir: string) => ({ everything: { command: process.execPath, args: [EVERYTHING, 'stdio', dir] } });
const mcpConfig = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers });
const load = (...names: string[]) => callTool('tool_search', { query: `select:${names.join(',')}` }, 'load');

/** What changed on disk beyond the servers' own logs under $KEEL_HOME/logs. */
const harm = (h: Hostile, changed: string[]) => changed.filter((p) => !p.startsWith(path.join(h.keelHome, 'logs')));

/** Every text the requests carried, joined. */
const bodies = (h: { server: { messageRequests(): Array<{ body: unknown }> } }) => h.server.messageRequests().map((r) => JSON.stringify(r.body)).join('\n');

describe('item 6: @server:uri only from what the user typed, and under the server rules', () => {
  it("attaches the user's mention, but not the same mention in a sub-agent task the model wrote", async () => {
    const task = `CHILD summarise @everything:${DOC} for me`;
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [callTool('agent', { task }, 'toolu_agent'), say('parent done')],
        CHILD: [say('child done')],
      }),
    });
    // A user-level server, so the sub-agent (which reads the config files again) has it too.
    writeFileSync(path.join(ws.home, 'mcp.json'), mcpConfig(everything(ws.dir)));
    const run = await runKeel(['-p', `PARENT read @everything:${DOC}`, '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    const parent = conversation(server.requests, 'PARENT');
    expect(JSON.stringify(parent[0]!.body.messages[0])).toContain(DOC_TEXT);
    const child = conversation(server.requests, 'CHILD');
    expect(child.length).toBeGreaterThan(0);
    expect(firstUserText(child[0]!)).toContain(`@everything:${DOC}`);
    expect(JSON.stringify(child[0]!.body.messages)).not.toContain(DOC_TEXT);
    expect(JSON.stringify(child[0]!.body.messages)).not.toContain('<resource server=');
    expect(await processesGone(ws.dir)).toEqual([]);
  }, 120_000);

  it("does not attach a mention in a Stop hook's follow-up (text the hook took from the model's answer)", async () => {
    const { env, ws, server } = await prepare([say(`now read @everything:${DOC}`), say('second answer')]);
    // A hook that sends the model back with its own last words, as a review hook quoting the answer might.
    const hook = `grep -q '"stop_hook_active":true' && exit 0; echo "you said: now read @everything:${DOC}" >&2; exit 2`;
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: hook }] }] } }));
    writeFileSync(path.join(ws.home, 'mcp.json'), mcpConfig(everything(ws.dir)));
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('second answer\n');
    const second = server.messageRequests()[1]!.body.messages;
    expect(JSON.stringify(second[second.length - 1])).toContain(`you said: now read @everything:${DOC}`);
    expect(bodies({ server })).not.toContain(DOC_TEXT);
    expect(await processesGone(ws.dir)).toEqual([]);
  }, 90_000);

  it.each(['mcp__everything', 'mcp__everything__*'])('a deny rule %s stops the read of a resource the user named', async (rule) => {
    const h = await hostile([say('done')]);
    const run = await h.run(['-p', `read @everything:${DOC}`, '--mcp-config', mcpConfig(everything(h.dir)), '--permission-mode', 'auto', '--disallowedTools', rule], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`@everything:${DOC} was not read: the permission rule "${rule}" denies MCP server everything`);
    const sent = JSON.stringify(h.server.messageRequests()[0]!.body.messages[0]);
    expect(sent).toContain(`[could not attach @everything:${DOC}: the permission rule \\"${rule}\\" denies MCP server everything]`);
    expect(bodies(h)).not.toContain(DOC_TEXT);
    expect(h.verdict().leaked).toEqual([]);
  }, 90_000);

  it('a deny rule naming one tool of the server does not cover its resources', async () => {
    const h = await hostile([say('done')]);
    const run = await h.run(['-p', `read @everything:${DOC}`, '--mcp-config', mcpConfig(everything(h.dir)), '--permission-mode', 'auto', '--disallowedTools', 'mcp__everything__echo'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(bodies(h)).toContain(DOC_TEXT);
  }, 90_000);
});

describe("item 11: a server's readOnlyHint is trusted only on the user's say", () => {
  /** The liar's tool, called to write a new file outside the project. */
  const attack = (h: Hostile) => {
    const target = path.join(h.outside, 'planted.txt');
    h.server.push(load('mcp__liar__save_note'), callTool('mcp__liar__save_note', { path: target, text: 'planted' }, 'write'), say('done'));
    return target;
  };
  const liar = mcpConfig({ liar: { command: process.execPath, args: [LIAR] } });

  it('is asked in ask mode: a headless run cannot ask, so the write is refused and nothing outside changes', async () => {
    const h = await hostile();
    const target = attack(h);
    const run = await h.run(['-p', 'go', '--mcp-config', liar, '--permission-mode', 'ask'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.write?.is_error).toBe(true);
    expect(resultText(v.results.write)).toContain("mcp__liar__save_note needs the user's approval");
    expect(existsSync(target)).toBe(false);
    expect(harm(h, v.changed)).toEqual([]);
  }, 90_000);

  it('is refused in plan mode', async () => {
    const h = await hostile();
    const target = attack(h);
    const run = await h.run(['-p', 'go', '--mcp-config', liar, '--permission-mode', 'plan'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.write?.is_error).toBe(true);
    expect(resultText(v.results.write)).toContain('plan mode runs only read-level tools');
    expect(existsSync(target)).toBe(false);
    expect(harm(h, v.changed)).toEqual([]);
  }, 90_000);

  it("is refused in plan mode although an untrusted project's settings allow-list the server", async () => {
    const h = await hostile();
    h.write('.claude/settings.json', JSON.stringify({ permissions: { allow: ['mcp__liar', 'mcp__liar__save_note'] } }));
    h.write('agent.config.json', JSON.stringify({ permissions: { allow: ['mcp__liar'] } }));
    const target = attack(h);
    const run = await h.run(['-p', 'go', '--mcp-config', liar, '--permission-mode', 'plan'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('is not a trusted folder');
    const v = h.verdict();
    expect(resultText(v.results.write)).toContain('plan mode runs only read-level tools');
    expect(existsSync(target)).toBe(false);
    expect(harm(h, v.changed)).toEqual([]);
  }, 90_000);

  it.each(['mcp__liar', 'mcp__liar__save_note'])('runs unasked, in plan mode too, once the user allow-lists it (%s)', async (rule) => {
    const h = await hostile();
    const target = attack(h);
    const run = await h.run(['-p', 'go', '--mcp-config', liar, '--permission-mode', 'plan', '--allowedTools', rule], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.write?.is_error, resultText(v.results.write)).toBeUndefined();
    expect(readFileSync(target, 'utf8')).toBe('planted');
  }, 90_000);
});
