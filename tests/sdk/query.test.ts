import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { query, type SDKMessage, type SDKUserMessage } from '../../sdk/index.js';
import { AsyncQueue } from '../../sdk/queue.js';
import { callTool, say } from '../helpers/anthropic-server.js';
import { routeConversations, toolResultsOf } from '../helpers/conversations.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();

const user = (content: string): SDKUserMessage => ({ type: 'user', message: { role: 'user', content } });

/** Processes started with this KEEL_HOME: an in-process query must start none. */
function processesWithHome(home: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`KEEL_HOME=${home}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function nextOf(iterator: AsyncIterator<SDKMessage>, match: (m: SDKMessage) => boolean, seen: SDKMessage[]): Promise<SDKMessage> {
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) throw new Error(`the query ended before a matching message; seen: ${JSON.stringify(seen.map((m) => [m.type, m.subtype]))}`);
    seen.push(value);
    if (match(value)) return value;
  }
}

describe('query() from keel/sdk', () => {
  it('runs in-process: turns, canUseTool allow and deny, interrupt, permission mode, a malformed message', async () => {
    let hung!: () => void;
    const hanging = new Promise<void>((resolve) => (hung = resolve));
    const { env, ws, server } = await prepare([
      callTool('write_file', { path: 'a.txt', content: 'A' }, 'toolu_a'),
      callTool('write_file', { path: 'b.txt', content: 'B' }, 'toolu_b'),
      say('turn one done'),
      callTool('write_file', { path: 'c.txt', content: 'C' }, 'toolu_c'),
      () => {
        hung();
        return { fault: 'hang' };
      },
      say('still here'),
    ]);
    const input = new AsyncQueue<SDKUserMessage>();
    const asked: string[] = [];
    const q = query({
      prompt: input,
      options: {
        cwd: ws.dir,
        env,
        systemPrompt: 'In-process host prompt.',
        agents: { helper: { description: 'Helps the host', prompt: 'You help the host.', tools: ['Read'] } },
        canUseTool: async (tool, toolInput, { toolUseId }) => {
          asked.push(`${tool}:${toolUseId}`);
          return toolUseId === 'toolu_a' ? { behavior: 'allow', updatedInput: { ...(toolInput as object), content: 'A!' } } : { behavior: 'deny', message: 'no b' };
        },
      },
    });
    const seen: SDKMessage[] = [];
    input.push({ nonsense: true } as unknown as SDKUserMessage);
    expect((await nextOf(q, (m) => m.type === 'system' && m.subtype === 'error', seen)).error).toBe('message 2: expected a JSON object with a string "type"');

    input.push(user('TURN1'));
    const init = await nextOf(q, (m) => m.subtype === 'init', seen);
    expect(init).toMatchObject({ cwd: ws.dir, permissionMode: 'ask', agents: ['helper'] });
    expect(await nextOf(q, (m) => m.type === 'result', seen)).toMatchObject({ subtype: 'success', result: 'turn one done', num_turns: 3 });
    expect(asked).toEqual(['write_file:toolu_a', 'write_file:toolu_b']);
    expect(readFileSync(ws.path('a.txt'), 'utf8')).toBe('A!');
    expect(existsSync(ws.path('b.txt'))).toBe(false);
    expect(toolResultsOf(server.messageRequests()[2]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('no b') });
    expect(server.messageRequests()[0]!.body.system[0].text).toBe('In-process host prompt.');
    const agentTool = server.messageRequests()[0]!.body.tools.find((t: { name: string }) => t.name === 'agent');
    expect(agentTool.description).toContain('- helper: Helps the host (tools: read_file)');

    await q.setPermissionMode('acceptEdits');
    await expect(q.setPermissionMode('yolo')).rejects.toThrow(/set_permission_mode: unknown mode "yolo"/);
    input.push(user('TURN2'));
    await hanging;
    expect(readFileSync(ws.path('c.txt'), 'utf8')).toBe('C');
    expect(processesWithHome(ws.home)).toEqual([]);
    await q.interrupt();
    expect(await nextOf(q, (m) => m.type === 'result', seen)).toMatchObject({ subtype: 'error_during_execution', is_error: true });

    input.push(user('TURN3'));
    expect(await nextOf(q, (m) => m.type === 'result', seen)).toMatchObject({ subtype: 'success', result: 'still here', session_id: init.session_id });
    input.end();
    expect(await q.next()).toEqual({ value: undefined, done: true });
    expect(asked).toHaveLength(2);
  });

  it('runs over a spawned CLI with a string prompt, and aborts with the abortController', async () => {
    const { env, ws } = await prepare([say('over the wire'), { fault: 'hang' }]);
    const messages: SDKMessage[] = [];
    for await (const message of query({ prompt: 'hello', options: { transport: 'process', cwd: ws.dir, env: { PATH: process.env.PATH, ...env }, model: 'claude-wire' } })) {
      messages.push(message);
    }
    expect(messages[0]).toMatchObject({ type: 'system', subtype: 'init', model: 'claude-wire' });
    expect(messages[messages.length - 1]).toMatchObject({ type: 'result', subtype: 'success', result: 'over the wire' });

    const abortController = new AbortController();
    const q = query({ prompt: 'hang', options: { cwd: ws.dir, env, abortController } });
    const first = await q.next();
    expect(first.value).toMatchObject({ subtype: 'init' });
    abortController.abort();
    const rest: SDKMessage[] = [];
    for await (const message of q) rest.push(message);
    expect(rest[rest.length - 1]).toMatchObject({ type: 'result', subtype: 'error_during_execution' });
  });

  it("ends with the main agent's result, not a sub-agent's", async () => {
    const { env, ws } = await prepare([], {
      route: routeConversations({ PARENT: [callTool('agent', { task: 'CHILD help' }, 'toolu_h'), say('main answer')], CHILD: [say('child answer')] }),
    });
    const messages: SDKMessage[] = [];
    for await (const message of query({ prompt: 'PARENT go', options: { cwd: ws.dir, env, permissionMode: 'bypassPermissions' } })) messages.push(message);
    const results = messages.filter((m) => m.type === 'result');
    expect(results.map((m) => [m.parent_tool_use_id ?? null, m.result])).toEqual([
      ['toolu_h', 'child answer'],
      [null, 'main answer'],
    ]);
  });

  it('takes custom plugins in-process and resumes a session by id', async () => {
    const { env, ws, server } = await prepare([say('first answer'), say('second answer')]);
    const marker = definePlugin(() => ({
      name: 'host-marker',
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.hooks.contextLoad.tapPromise('host-marker', async (context) => ({ ...context, system: [...context.system, { type: 'text', text: 'HOST PLUGIN WAS HERE' }] }));
      },
    }));
    const first: SDKMessage[] = [];
    for await (const m of query({ prompt: 'remember 42', options: { cwd: ws.dir, env, plugins: [marker()] } })) first.push(m);
    const sessionId = first.find((m) => m.type === 'result')!.session_id as string;
    expect(JSON.stringify(server.messageRequests()[0]!.body.system)).toContain('HOST PLUGIN WAS HERE');

    const second: SDKMessage[] = [];
    for await (const m of query({ prompt: 'what was it?', options: { cwd: ws.dir, env, resume: sessionId } })) second.push(m);
    expect(second.find((m) => m.type === 'result')).toMatchObject({ result: 'second answer', session_id: sessionId });
    const messages = server.messageRequests()[1]!.body.messages;
    expect(JSON.stringify(messages)).toContain('remember 42');
    expect(JSON.stringify(server.messageRequests()[1]!.body.system)).not.toContain('HOST PLUGIN WAS HERE');
  });

  it('a canUseTool that throws, or answers nothing, denies the call saying why; the query goes on', async () => {
    const { env, ws, server } = await prepare([
      callTool('write_file', { path: 'thrown.txt', content: 'T' }, 'toolu_throw'),
      callTool('write_file', { path: 'nothing.txt', content: 'N' }, 'toolu_nothing'),
      say('both refused'),
    ]);
    const q = query({
      prompt: 'write two files',
      options: {
        cwd: ws.dir,
        env,
        canUseTool: async (_tool, input) => {
          if ((input as { path?: string }).path === 'thrown.txt') throw new Error('the host callback broke');
          return undefined as never;
        },
      },
    });
    const seen: SDKMessage[] = [];
    for await (const message of q) seen.push(message);
    expect(seen.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'both refused' });
    expect(existsSync(`${ws.dir}/thrown.txt`)).toBe(false);
    expect(existsSync(`${ws.dir}/nothing.txt`)).toBe(false);
    expect(toolResultsOf(server.messageRequests()[1]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('the host callback broke') });
    expect(toolResultsOf(server.messageRequests()[2]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('the host answered can_use_tool with behavior undefined') });
  });

  it.each(['in-process', 'process'] as const)('%s: an interrupt while canUseTool waits aborts its signal; its late answer is dropped without an error line', async (transport) => {
    const { env, ws } = await prepare([callTool('write_file', { path: 'late.txt', content: 'L' }, 'toolu_late'), say('never reached')]);
    let asked!: () => void;
    const asking = new Promise<void>((resolve) => (asked = resolve));
    let reason: unknown;
    const q = query({
      prompt: 'write late.txt',
      options: {
        cwd: ws.dir,
        env,
        transport,
        canUseTool: (_tool, _input, { signal }) =>
          new Promise((resolve) => {
            asked();
            signal.addEventListener('abort', () => {
              reason = signal.reason;
              // A host that answers anyway, after Keel gave up on the question.
              resolve({ behavior: 'allow' });
            });
          }),
      },
    });
    const seen: SDKMessage[] = [];
    const reading = (async () => {
      for await (const message of q) seen.push(message);
    })();
    await asking;
    await q.interrupt();
    await reading;
    expect(seen.at(-1)).toMatchObject({ type: 'result', subtype: 'error_during_execution' });
    expect(String(reason)).toContain('the turn ended before canUseTool answered');
    expect(seen.filter((m) => m.type === 'system' && m.subtype === 'error')).toEqual([]);
    expect(existsSync(`${ws.dir}/late.txt`)).toBe(false);
  });

  it('names a bad option in its error', async () => {
    const { env, ws } = await prepare([]);
    const q = query({ prompt: 'x', options: { cwd: ws.dir, env, preset: 'turbo' } });
    await expect(q.next()).rejects.toThrow('query() options: unknown preset "turbo" (known presets: default, headless, minimal, policy-strict, fleet-worker)');
    const bad = query({ prompt: 'x', options: { cwd: ws.dir, env, permissionMode: 'yolo' } });
    await expect(bad.next()).rejects.toThrow(/query\(\) options: permissionMode: must be one of/);
  });
});

describe("query() with Claude Code's headless options", () => {
  for (const transport of ['in-process', 'process'] as const) {
    it(`${transport}: outputFormat json_schema gives structured_output; maxBudgetUsd ends the next turn with error_max_budget_usd`, async () => {
      const { env, ws, server } = await prepare([{ ...callTool('StructuredOutput', { ok: true }), usage: { input_tokens: 100_000, output_tokens: 0 } }, say('never sent')]);
      const input = new AsyncQueue<SDKUserMessage>();
      const q = query({
        prompt: input,
        options: { cwd: ws.dir, env, transport, maxBudgetUsd: 0.25, fallbackModel: 'claude-haiku-spare', outputFormat: { type: 'json_schema', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } },
      });
      const seen: SDKMessage[] = [];
      try {
        input.push(user('is it ok?'));
        const first = await nextOf(q, (m) => m.type === 'result', seen);
        expect(first).toMatchObject({ subtype: 'success', structured_output: { ok: true } });
        input.push(user('and again?'));
        const second = await nextOf(q, (m) => m.type === 'result', seen);
        expect(second).toMatchObject({ subtype: 'error_max_budget_usd', is_error: true });
        expect(server.messageRequests()).toHaveLength(1);
      } finally {
        input.end();
        await q.return?.(undefined);
      }
    });
  }
});
