import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, runAgent, type Answer, type PermissionChoice, type Plugin, type Question } from '../../../kernel/index.js';
import denialLog, { PREVIOUSLY_DENIED } from '../../../plugins/denial-log/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let server: ScriptedServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  server = undefined;
  ws = undefined;
});

const runs: string[] = [];
const writeTool = defineTool({
  name: 'write_file',
  description: 'write',
  permission: 'write',
  input: z.object({ path: z.string() }),
  paths: (i) => [i.path],
  execute: async (i) => {
    runs.push(i.path);
    return { content: `wrote ${i.path}` };
  },
});
const tools: Plugin = { name: 'test-tools', kernel: '^1.0.0', apply: (k) => k.tools.register(writeTool) };

/** A frontend that answers permission questions from a list, recording each question. */
function answering(choices: PermissionChoice[], asked: Question[]): Plugin {
  return {
    name: 'test-frontend',
    kernel: '^1.0.0',
    apply(k) {
      k.hooks.askUser.tapPromise('test-frontend', async (q): Promise<Answer | undefined> => {
        asked.push(q);
        const choice = choices.shift();
        return choice ? { kind: 'permission', choice } : undefined;
      });
    },
  };
}

async function run(script: Parameters<typeof startAnthropicServer>[0], choices: PermissionChoice[], withLog = true) {
  server = await startAnthropicServer(script);
  ws = makeWorkspace();
  const asked: Question[] = [];
  runs.length = 0;
  const kernel = testKernel([queryAnthropic(), tools, permissions(), ...(withLog ? [denialLog()] : []), answering(choices, asked)], {
    baseURL: server.url,
  });
  const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'ask' });
  const result = await runAgent(kernel, session, 'go');
  return { kernel, session, result, asked, requests: server.messageRequests() };
}

/** The tool_result the model received for a call id. */
function resultFor(requests: ReturnType<ScriptedServer['messageRequests']>, id: string) {
  for (const r of requests) for (const m of r.body.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.tool_use_id === id) return b;
  return undefined;
}

describe('denial-log', () => {
  it('taps prePermission first', async () => {
    const { kernel } = await run([say('hi')], []);
    expect(kernel.describe()).toMatch(/prePermission: denial-log@-100 → permissions/);
  });

  it('"Deny" refuses the call; the very same call is refused without asking, another call of the tool is asked', async () => {
    const { asked, result, requests } = await run(
      [
        callTool('write_file', { path: 'a.txt' }, 't1'),
        callTool('write_file', { path: 'a.txt' }, 't2'),
        callTool('write_file', { path: 'b.txt' }, 't3'),
        say('ok'),
      ],
      ['deny', 'allow_once'],
    );
    expect(asked.map((q) => (q.kind === 'permission' ? q.call.id : ''))).toEqual(['t1', 't3']);
    expect(resultFor(requests, 't1')).toMatchObject({ is_error: true, content: expect.stringContaining('Permission denied by the user') });
    expect(resultFor(requests, 't2')).toMatchObject({ is_error: true, content: PREVIOUSLY_DENIED });
    expect(resultFor(requests, 't3')?.is_error).toBeUndefined();
    expect(result.permissionDenials.map((d) => d.tool_use_id)).toEqual(['t1', 't2']);
    expect(runs).toEqual(['b.txt']);
  });

  it('"Deny" is remembered for the prompt only: a later prompt asks again about the same call', async () => {
    const { kernel, session, asked, requests } = await run([callTool('write_file', { path: 'a.txt' }, 't1'), say('ok'), callTool('write_file', { path: 'a.txt' }, 't2'), say('ok')], ['deny', 'deny']);
    await runAgent(kernel, session, 'try again');
    expect(asked.map((q) => (q.kind === 'permission' ? q.call.id : ''))).toEqual(['t1', 't2']);
    expect(resultFor(server!.messageRequests(), 't2')).toMatchObject({ is_error: true, content: expect.stringContaining('Permission denied by the user') });
    expect(requests).toHaveLength(2);
    expect(runs).toEqual([]);
  });

  it('"Deny, and don\'t ask again" adds a session deny rule that /permissions lists and removes; then the tool is asked again', async () => {
    const { asked, result, requests, kernel, session } = await run(
      [callTool('write_file', { path: 'a.txt' }, 't1'), callTool('write_file', { path: 'b.txt' }, 't2'), say('ok'), callTool('write_file', { path: 'c.txt' }, 't3'), say('ok')],
      ['deny_session', 'allow_once'],
    );
    expect(asked).toHaveLength(1);
    expect(resultFor(requests, 't1')).toMatchObject({ is_error: true, content: expect.stringContaining('Permission denied by the user') });
    expect(resultFor(requests, 't2')).toMatchObject({ is_error: true, content: expect.stringMatching(/Permission denied: .*write_file/) });
    expect(result.permissionDenials.map((d) => d.tool_use_id)).toEqual(['t1', 't2']);
    expect(kernel.services.get('denial-log')?.isDenied(session, 'write_file')).toBe(true);
    const command = kernel.commands.get('permissions')!;
    const ctx = { kernel, session, print: () => undefined, signal: new AbortController().signal };
    expect(await command.run('', ctx)).toMatch(/deny:\n {2}write_file {2}\(this session\)/);
    expect(await command.run('remove write_file', ctx)).toBe('Removed: write_file');
    expect(await command.run('', ctx)).not.toMatch(/deny:/);
    expect(kernel.services.get('denial-log')?.isDenied(session, 'write_file')).toBe(false);
    await runAgent(kernel, session, 'once more');
    expect(asked.map((q) => (q.kind === 'permission' ? q.call.id : ''))).toEqual(['t1', 't3']);
    expect(runs).toEqual(['c.txt']);
  });

  it('"Allow this session" after "Deny" lets the denied call through too', async () => {
    const { asked, requests } = await run(
      [
        callTool('write_file', { path: 'a.txt' }, 't1'),
        callTool('write_file', { path: 'b.txt' }, 't2'),
        callTool('write_file', { path: 'a.txt' }, 't3'),
        say('ok'),
      ],
      ['deny', 'allow_session'],
    );
    expect(asked).toHaveLength(2);
    expect(resultFor(requests, 't3')?.is_error).toBeUndefined();
    expect(runs).toEqual(['b.txt', 'a.txt']);
  });

  it('"Allow this session" lets later calls through without asking', async () => {
    const { asked, result } = await run(
      [callTool('write_file', { path: 'a.txt' }, 't1'), callTool('write_file', { path: 'b.txt' }, 't2'), say('ok')],
      ['allow_session'],
    );
    expect(asked).toHaveLength(1);
    expect(runs).toEqual(['a.txt', 'b.txt']);
    expect(result.permissionDenials).toEqual([]);
  });

  it('"Allow once" asks again next time', async () => {
    const { asked } = await run(
      [callTool('write_file', { path: 'a.txt' }, 't1'), callTool('write_file', { path: 'b.txt' }, 't2'), say('ok')],
      ['allow_once', 'allow_once'],
    );
    expect(asked).toHaveLength(2);
    expect(runs).toEqual(['a.txt', 'b.txt']);
  });

  it('"Allow this session" overrides an earlier denial', async () => {
    server = await startAnthropicServer([say('hi')]);
    ws = makeWorkspace();
    const kernel = testKernel([queryAnthropic(), tools, permissions(), denialLog()], { baseURL: server.url });
    const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
    const call = { id: 'x1', name: 'write_file', input: { path: 'a.txt' } };
    const turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
    await kernel.hooks.prePermission.promise(call, turn);
    kernel.emit({ type: 'permission', call, decision: { behavior: 'deny', reason: 'no' }, source: 'user', choice: 'deny' });
    expect(await kernel.hooks.prePermission.promise({ ...call, id: 'x2' }, turn)).toEqual({ behavior: 'deny', reason: PREVIOUSLY_DENIED });
    kernel.emit({ type: 'permission', call: { ...call, id: 'x2' }, decision: { behavior: 'allow' }, source: 'user', choice: 'allow_session' });
    expect(await kernel.hooks.prePermission.promise({ ...call, id: 'x3' }, turn)).toMatchObject({ behavior: 'allow' });
    expect(kernel.services.get('denial-log')?.isAllowed(session, 'write_file')).toBe(true);
  });

  it('a call denied after "Allow this session" (an always-asked path) is refused again without asking', async () => {
    server = await startAnthropicServer([say('hi')]);
    ws = makeWorkspace();
    const kernel = testKernel([queryAnthropic(), tools, permissions(), denialLog()], { baseURL: server.url });
    const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'ask' });
    const turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
    const decide = (id: string, p: string) => kernel.hooks.prePermission.promise({ id, name: 'write_file', input: { path: p } }, turn);
    await decide('w1', 'a.txt');
    kernel.emit({ type: 'permission', call: { id: 'w1', name: 'write_file', input: { path: 'a.txt' } }, decision: { behavior: 'allow' }, source: 'user', choice: 'allow_session' });
    expect((await decide('w2', 'b.txt'))?.behavior).toBe('allow');
    // .git/config is asked even after "Allow this session"; the user denies that one call.
    expect((await decide('w3', '.git/config'))?.behavior).toBe('ask');
    kernel.emit({ type: 'permission', call: { id: 'w3', name: 'write_file', input: { path: '.git/config' } }, decision: { behavior: 'deny', reason: 'no' }, source: 'user', choice: 'deny' });
    expect(await decide('w4', '.git/config')).toEqual({ behavior: 'deny', reason: PREVIOUSLY_DENIED });
    expect((await decide('w5', 'c.txt'))?.behavior).toBe('allow');
    // "Deny, and don't ask again" then withdraws the allowance too: a deny rule beats it.
    expect((await decide('w6', '.git/hooks/pre-commit'))?.behavior).toBe('ask');
    kernel.emit({ type: 'permission', call: { id: 'w6', name: 'write_file', input: { path: '.git/hooks/pre-commit' } }, decision: { behavior: 'deny', reason: 'no' }, source: 'user', choice: 'deny_session' });
    expect((await decide('w7', 'e.txt'))?.behavior).toBe('deny');
  });

  it('answers are per session', async () => {
    const { kernel, session } = await run([callTool('write_file', { path: 'a.txt' }, 't1'), say('ok')], ['deny_session']);
    const other = await testSession(kernel, { cwd: session.cwd, projectRoot: session.projectRoot });
    const service = kernel.services.get('denial-log')!;
    expect(service.isDenied(session, 'write_file')).toBe(true);
    expect(service.isDenied(other, 'write_file')).toBe(false);
    await kernel.commands.get('permissions')!.run('remove write_file', { kernel, session, print: () => undefined, signal: new AbortController().signal });
    expect(service.isDenied(session, 'write_file')).toBe(false);
  });

  it('"Allow this session" never overrides the shell guard or deny rules', async () => {
    server = await startAnthropicServer([say('hi')]);
    ws = makeWorkspace();
    const bash = defineTool({ name: 'bash', description: 'b', permission: 'execute', input: z.object({ command: z.string() }), execute: async () => ({ content: '' }) });
    const kernel = testKernel([{ name: 'test-tools', kernel: '^1.0.0', apply: (k) => k.tools.register(bash) }, permissions(), denialLog()], {
      permissions: { allow: [], ask: [], deny: ['bash(git push *)'] },
    });
    const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
    const turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
    await kernel.hooks.prePermission.promise({ id: 'b1', name: 'bash', input: { command: 'ls' } }, turn);
    kernel.emit({ type: 'permission', call: { id: 'b1', name: 'bash', input: {} }, decision: { behavior: 'allow' }, source: 'user', choice: 'allow_session' });
    const decide = (command: string) => kernel.hooks.prePermission.promise({ id: command, name: 'bash', input: { command } }, turn);
    expect((await decide('make'))?.behavior).toBe('allow');
    expect((await decide('rm -rf /'))?.behavior).toBe('deny');
    expect((await decide('git push origin main'))?.behavior).toBe('deny');
    expect((await decide('echo "unterminated'))?.behavior).toBe('ask');
  });

  it('headless (no one to ask): denied with a message that the user must approve, listed in permission_denials, not remembered', async () => {
    const { result, requests, session, kernel } = await run(
      [callTool('write_file', { path: 'a.txt' }, 't1'), callTool('write_file', { path: 'b.txt' }, 't2'), say('done')],
      [],
    );
    expect(resultFor(requests, 't1')).toMatchObject({ is_error: true, content: expect.stringMatching(/write_file needs the user's approval/) });
    expect(resultFor(requests, 't2')?.content).not.toBe(PREVIOUSLY_DENIED);
    expect(result.permissionDenials).toEqual([
      { tool_name: 'write_file', tool_use_id: 't1', tool_input: { path: 'a.txt' } },
      { tool_name: 'write_file', tool_use_id: 't2', tool_input: { path: 'b.txt' } },
    ]);
    expect(kernel.services.get('denial-log')?.isDenied(session, 'write_file')).toBe(false);
  });
});
