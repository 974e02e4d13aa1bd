import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKernel, defaultConfig, runAgent, startSession, type AgentEvent, type Kernel, type McpServerConfig, type PermissionChoice, type Plugin, type Question } from '../../../kernel/index.js';
import denialLog from '../../../plugins/denial-log/index.js';
import mcpBridge, { type McpService } from '../../../plugins/mcp-bridge/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import toolSearch from '../../../plugins/tool-search/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer, type ScriptStep } from '../../helpers/anthropic-server.js';
import { processesGone, testServer } from '../../helpers/mcp.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { until as pollUntil } from '../../helpers/until.js';

let ws: Workspace;
let server: ScriptedServer | undefined;
beforeEach(() => {
  ws = makeWorkspace({ git: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  ws.cleanup();
});

/** Answers permission questions from a queue, recording each question. */
function answering(choices: PermissionChoice[], asked: Question[]): Plugin {
  return {
    name: 'answers',
    kernel: '^1.0.0',
    apply: (kernel) =>
      kernel.hooks.askUser.tapPromise('answers', async (question) => {
        asked.push(question);
        const choice = choices.shift();
        return choice ? { kind: 'permission', choice } : undefined;
      }),
  };
}

async function setup(script: ScriptStep[], servers: Record<string, McpServerConfig>, opts: { mode?: 'auto' | 'ask'; answers?: PermissionChoice[]; allow?: string[]; deny?: string[] } = {}) {
  server = await startAnthropicServer(script);
  const asked: Question[] = [];
  const kernel = createKernel({
    config: defaultConfig({ apiKey: 'k', baseURL: server.url, keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir, mcpServers: servers, permissionMode: opts.mode ?? 'auto', permissions: { allow: opts.allow ?? [], ask: [], deny: opts.deny ?? [] } }),
  });
  for (const plugin of [queryAnthropic(), permissions(), denialLog(), toolSearch(), mcpBridge({ backoffMs: [100, 200] }), answering(opts.answers ?? [], asked)]) kernel.use(plugin);
  kernel.seal();
  const events: AgentEvent[] = [];
  kernel.observe((event) => events.push(event));
  const session = await startSession(kernel);
  return { kernel, session, events, asked };
}

/** Resolves when `test` holds for the kernel, checked after every event (the bridge emits on each change). */
function until(kernel: Kernel, test: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (test()) return resolve();
    const stop = kernel.observe(() => {
      if (test()) {
        stop();
        resolve();
      }
    });
  });
}

const lastResults = (index: number) => {
  const messages = server!.messageRequests()[index]!.body.messages as Array<{ content: unknown }>;
  return (messages[messages.length - 1]!.content as Array<{ type: string; content: unknown; is_error?: boolean }>).filter((b) => b.type === 'tool_result');
};

describe('mcp-bridge in a session', () => {
  it("trusts a tool's readOnlyHint only when an allow rule names the tool or its server", async () => {
    const { kernel } = await setup([], { t: testServer(ws.dir), u: testServer(ws.dir) }, { allow: ['mcp__t'] });
    await until(kernel, () => kernel.tools.has('mcp__t__echo') && kernel.tools.has('mcp__u__echo'));
    expect(kernel.tools.get('mcp__t__echo')!.permission).toBe('read');
    // Allow-listed, but the server does not call it read-only.
    expect(kernel.tools.get('mcp__t__crash')!.permission).toBe('network');
    expect(kernel.tools.get('mcp__u__echo')!.permission).toBe('network');
  });

  it("reads resources through the mcp service only under the server's rules", async () => {
    const { kernel, session } = await setup([], { t: testServer(ws.dir), u: testServer(ws.dir) }, { deny: ['mcp__u__*', 'mcp__t__echo'] });
    const mcp = kernel.services.get('mcp') as McpService;
    // A rule naming one tool of t does not cover t's resources.
    expect(await mcp.readResource('t', 'mem://note', session)).toEqual([{ uri: 'mem://note', mimeType: 'text/plain', text: 'the note resource says 42' }]);
    await expect(mcp.readResource('u', 'mem://note', session)).rejects.toThrow('the permission rule "mcp__u__*" denies MCP server u');
    await expect(mcp.readResource('nope', 'mem://note', session)).rejects.toThrow('no MCP server named nope');
  });

  it('maps content, keeps isError and structuredContent, and publishes progress as events', async () => {
    const { kernel, session, events } = await setup(
      [callTool('mcp__t__slow', {}), callTool('mcp__t__mixed', {}), callTool('mcp__t__fails', {}), say('done')],
      { t: testServer(ws.dir) },
    );
    await until(kernel, () => kernel.tools.has('mcp__t__slow'));
    // The server's readOnlyHint alone does not make a tool read-level: only the user's allow rule does.
    expect(kernel.tools.get('mcp__t__echo')!.permission).toBe('network');
    expect(kernel.tools.get('mcp__t__crash')!.permission).toBe('network');
    expect(kernel.tools.get('mcp__t__echo')!.deferLoading).toBe(true);
    const result = await runAgent(kernel, session, 'go');
    expect(result.result).toBe('done');

    const progress = events
      .filter((e) => e.type === 'mcp_progress')
      .map((e) => (e.type === 'mcp_progress' ? [e.progress, e.total, e.message, e.server, e.tool] : []));
    // The SDK handles notifications a microtask later than responses, so progress that arrives in the same
    // chunk as the result is dropped by it; what arrives before is published in order.
    expect(progress.length).toBeGreaterThan(0);
    expect(progress).toEqual(
      [
        [1, 3, 'step 1', 't', 'slow'],
        [2, 3, 'step 2', 't', 'slow'],
        [3, 3, 'step 3', 't', 'slow'],
      ].slice(0, progress.length),
    );
    expect(lastResults(1)[0]!.content).toBe('slow done');
    expect(lastResults(2)[0]!.content).toEqual([
      { type: 'text', text: 'plain text' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: Buffer.from('png-bytes').toString('base64') } },
      { type: 'text', text: '[audio of type audio/wav, 3 bytes: audio cannot be shown to the model]' },
      { type: 'text', text: '[resource link: a.txt file:///tmp/a.txt (text/plain)]' },
      { type: 'text', text: '[resource mem://note (text/plain)]\nembedded note' },
    ]);
    const mixedEnd = events.find((e) => e.type === 'tool_end' && e.call.name === 'mcp__t__mixed');
    expect(mixedEnd?.type === 'tool_end' && mixedEnd.result.display).toEqual({ structuredContent: { ok: true } });
    expect(lastResults(3)[0]).toMatchObject({ content: 'it went wrong', is_error: true });
    await closeAll(kernel);
  });

  it("runs a server's prompt as the slash command /mcp__<server>__<prompt>", async () => {
    const { kernel, session } = await setup([say('Hello, Ada!')], { t: testServer(ws.dir) });
    await until(kernel, () => kernel.commands.has('mcp__t__greet'));
    const command = kernel.commands.get('mcp__t__greet')!;
    expect(command.description).toBe('Asks for a greeting. (MCP server t) — <name>');
    const ctx = { kernel, session, print: () => undefined, signal: new AbortController().signal };
    await expect(command.run('', ctx)).rejects.toThrow('/mcp__t__greet: missing name (usage: /mcp__t__greet <name>)');
    expect(await command.run('Ada', ctx)).toBe('Hello, Ada!');
    expect(server!.messageRequests()[0]!.body.messages[0].content[0].text).toBe('Say hello to Ada.');
    await closeAll(kernel);
  });

  it('asks again for a tool whose description changed after the user allowed it for the session', async () => {
    const { kernel, session, asked } = await setup(
      [callTool('mcp__t__mutable', {}), callTool('mcp__t__change_mutable', {}), say('one'), callTool('mcp__t__mutable', {}), say('two'), callTool('mcp__t__mutable', {}), say('three')],
      { t: testServer(ws.dir) },
      { mode: 'ask', answers: ['allow_session', 'allow_session', 'allow_session'] },
    );
    await until(kernel, () => kernel.tools.has('mcp__t__mutable'));
    await runAgent(kernel, session, 'first');
    expect(asked.map((q) => (q.kind === 'permission' ? q.call.name : ''))).toEqual(['mcp__t__mutable', 'mcp__t__change_mutable']);
    await until(kernel, () => kernel.tools.get('mcp__t__mutable')?.description.startsWith('A tool that has changed') ?? false);
    await runAgent(kernel, session, 'second');
    expect(asked).toHaveLength(3);
    expect(asked[2]!.kind === 'permission' && asked[2]!.reason).toBe('mcp__t__mutable changed since you allowed it: its description or input schema is different now');
    // Allowed again for the session as it is now: not asked a fourth time.
    await runAgent(kernel, session, 'third');
    expect(asked).toHaveLength(3);
    expect(lastResults(6)[0]!.content).toBe('mutable ran');
    await closeAll(kernel);
  });

  it('sends a cancellation to the server when the turn is interrupted mid-call', async () => {
    const cancelLog = ws.path('cancel.log');
    const { kernel, session } = await setup([callTool('mcp__t__hang', {}), say('unreachable')], { t: testServer(ws.dir, '--cancel-log', cancelLog) });
    await until(kernel, () => kernel.tools.has('mcp__t__hang'));
    const controller = new AbortController();
    const running = runAgent(kernel, session, 'go', { signal: controller.signal });
    const log = () => (existsSync(cancelLog) ? readFileSync(cancelLog, 'utf8') : '');
    await pollUntil(() => log().startsWith('started'), 'the server to start the call');
    controller.abort(new Error('interrupted'));
    expect((await running).aborted).toBe(true);
    await pollUntil(() => log().includes('cancelled'), 'the server to hear the cancellation');
    expect(log()).toMatch(/^started (\d+)\ncancelled \1\n$/);
    await closeAll(kernel);
  });

  it('with no servers configured, starts nothing and says so', async () => {
    const { kernel, session, events } = await setup([say('hi')], {});
    expect((await runAgent(kernel, session, 'hi')).result).toBe('hi');
    expect(events.some((e) => e.type === 'mcp_status')).toBe(false);
    expect(existsSync(path.join(ws.home, 'logs'))).toBe(false);
    const ctx = { kernel, session, print: () => undefined, signal: new AbortController().signal };
    expect(await kernel.commands.get('mcp')!.run('', ctx)).toBe('No MCP servers configured.');
  });

  it('without the network plugin, a remote server fails with one line saying so, and a stdio server still connects', async () => {
    const { kernel } = await setup([], { t: testServer(ws.dir), remote: { type: 'http', url: 'http://127.0.0.1:9/mcp' } });
    const mcp = kernel.services.require('mcp', 'test');
    await until(kernel, () => kernel.tools.has('mcp__t__echo') && mcp.status().some((s) => s.name === 'remote' && s.error !== undefined));
    expect(mcp.status().find((s) => s.name === 'remote')!.error).toBe('a remote (http) MCP server is reached through the network plugin, which this agent does not have: add network() to its plugins');
    await closeAll(kernel);
  });

  it('reconnects one server with /mcp reconnect and refuses an unknown name', async () => {
    const { kernel, session } = await setup([], { t: testServer(ws.dir) });
    await until(kernel, () => kernel.tools.has('mcp__t__echo'));
    const ctx = { kernel, session, print: () => undefined, signal: new AbortController().signal };
    expect(await kernel.commands.get('mcp')!.run('reconnect t', ctx)).toBe('t: connected, 12 tools');
    await expect(kernel.commands.get('mcp')!.run('reconnect nope', ctx)).rejects.toThrow('/mcp reconnect: no server named "nope" (servers: t)');
    await expect(kernel.commands.get('mcp')!.run('restart', ctx)).rejects.toThrow('/mcp: unknown argument "restart"');
    await closeAll(kernel);
  });
});

/** Closes the bridge: every server's process group is gone afterwards. */
async function closeAll(kernel: Kernel): Promise<void> {
  await kernel.services.require('mcp', 'test').close();
  expect(await processesGone(ws.dir)).toEqual([]);
}
