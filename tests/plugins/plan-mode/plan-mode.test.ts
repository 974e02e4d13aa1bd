import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createKernel, defaultConfig, runAgent, startSession, type Answer, type Question, type Plugin } from '../../../kernel/index.js';
import permissions from '../../../plugins/permissions/index.js';
import planMode from '../../../plugins/plan-mode/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let server: ScriptedServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
});

/** A frontend that answers every question with `answer` and remembers what it was asked. */
function frontend(answer: (q: Question) => Answer | undefined, asked: Question[]): Plugin {
  return {
    name: 'test-frontend',
    kernel: '^1.0.0',
    apply: (k) => k.hooks.askUser.tapPromise('test-frontend', async (q) => (asked.push(q), answer(q))),
  };
}

async function setup(script: Parameters<typeof startAnthropicServer>[0], answer: (q: Question) => Answer | undefined) {
  server = await startAnthropicServer(script);
  ws = makeWorkspace();
  const asked: Question[] = [];
  const kernel = createKernel({ config: defaultConfig({ apiKey: 'k', baseURL: server.url, cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home, permissionMode: 'plan' }) });
  for (const p of [queryAnthropic(), permissions(), planMode(), toolsFs(), frontend(answer, asked)]) kernel.use(p);
  kernel.seal();
  const modes: string[] = [];
  kernel.observe((e) => {
    if (e.type === 'permission_mode') modes.push(`${e.from}->${e.to}`);
  });
  const session = await startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'plan' });
  return { kernel, session, asked, modes };
}

describe('exit_plan_mode', () => {
  it('asks the user with the plan, switches to edits when approved, and the write then runs', async () => {
    const { kernel, session, asked, modes } = await setup(
      [callTool('write_file', { path: 'a.txt', content: 'x' }), callTool('exit_plan_mode', { plan: 'write a.txt' }), callTool('write_file', { path: 'a.txt', content: 'x' }), say('done')],
      () => ({ kind: 'permission', choice: 'allow_once' }),
    );
    const result = await runAgent(kernel, session, 'plan then do');
    expect(result.result).toBe('done');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ kind: 'permission', preview: 'write a.txt', options: ['allow_once', 'deny'] });
    expect(session.permissionMode).toBe('edits');
    expect(modes).toEqual(['plan->edits']);
    expect(readFileSync(ws!.path('a.txt'), 'utf8')).toBe('x');
    const third = server!.messageRequests()[2].body.messages.at(-1).content[0];
    expect(third.content).toContain('approved the plan');
  });

  it('stays in plan mode with the feedback when the user declines', async () => {
    const { kernel, session } = await setup([callTool('exit_plan_mode', { plan: 'p' }), callTool('write_file', { path: 'a.txt', content: 'x' }), say('ok')], () => ({
      kind: 'permission',
      choice: 'deny',
      message: 'also handle errors',
    }));
    await runAgent(kernel, session, 'plan');
    expect(session.permissionMode).toBe('plan');
    const requests = server!.messageRequests();
    expect(requests[1].body.messages.at(-1).content[0].content).toContain('Their feedback: also handle errors');
    expect(requests[2].body.messages.at(-1).content[0]).toMatchObject({ is_error: true });
    expect(existsSync(ws!.path('a.txt'))).toBe(false);
  });

  it('/plan enters plan mode and /plan off goes back; outside plan mode the tool says so', async () => {
    const { kernel, session } = await setup([], () => undefined);
    session.permissionMode = 'edits';
    const ctx = { kernel, session, print: () => undefined, signal: new AbortController().signal };
    const plan = kernel.commands.get('plan')!;
    expect(await plan.run('', ctx)).toContain('Plan mode is on');
    expect(session.permissionMode).toBe('plan');
    expect(await plan.run('off', ctx)).toBe('Plan mode is off; the permission mode is edits.');
    await expect(plan.run('maybe', ctx)).rejects.toThrow('unknown argument "maybe"');
    const tool = kernel.tools.get('exit_plan_mode')!;
    const turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
    const result = await tool.execute({ plan: 'p' }, { signal: turn.signal, session, turn, call: { id: 'c', name: 'exit_plan_mode', input: {} }, kernel, cwd: session.cwd, emit: () => undefined });
    expect(result).toMatchObject({ isError: true, content: expect.stringContaining('not plan') });
  });
});
