import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, runAgent, type AgentEvent, type Plugin, type Session, type ToolDefinition } from '../../kernel/index.js';
import queryAnthropic from '../../plugins/query-anthropic/index.js';
import { callTool, callTools, plainMessages, say, startAnthropicServer, type ScriptedServer, type ScriptStep } from '../helpers/anthropic-server.js';
import { testKernel, testSession } from '../helpers/kernel.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const allowAll: Plugin = {
  name: 'allow-all',
  kernel: '^1.0.0',
  apply: (k) => k.hooks.prePermission.tapPromise('allow-all', async () => ({ behavior: 'allow' })),
};

function toolsPlugin(tools: ToolDefinition[]): Plugin {
  return { name: 'test-tools', kernel: '^1.0.0', apply: (k) => tools.forEach((t) => k.tools.register(t)) };
}

async function setup(script: ScriptStep[], plugins: Plugin[] = [], config = {}) {
  server = await startAnthropicServer(script);
  const kernel = testKernel([queryAnthropic(), ...plugins], { baseURL: server.url, ...config });
  const events: AgentEvent[] = [];
  kernel.observe((e) => events.push(e));
  const session: Session = await testSession(kernel);
  return { kernel, session, events, server };
}

const echo = defineTool({
  name: 'echo',
  description: 'echo',
  permission: 'read',
  input: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ content: `echo: ${text}` }),
});

function toolResults(body: { messages: Array<{ role: string; content: unknown }> }) {
  const messages = plainMessages(body.messages);
  const last = messages[messages.length - 1];
  return last.content as Array<{ type: string; tool_use_id: string; content: string; is_error?: boolean }>;
}

describe('stop_reason routing', () => {
  it('end_turn finishes with the text', async () => {
    const { kernel, session } = await setup([say('All done.')]);
    const result = await runAgent(kernel, session, 'hello');
    expect(result).toMatchObject({ subtype: 'success', isError: false, result: 'All done.', stopReason: 'end_turn', numTurns: 1 });
    expect(plainMessages(server!.messageRequests()[0].body.messages)).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('stop_sequence finishes like end_turn', async () => {
    const { kernel, session } = await setup([say('stopped', { stopReason: 'stop_sequence' })]);
    const result = await runAgent(kernel, session, 'go');
    expect(result).toMatchObject({ subtype: 'success', result: 'stopped', stopReason: 'stop_sequence' });
  });

  it('tool_use runs the tool and continues with its result', async () => {
    const { kernel, session } = await setup([callTool('echo', { text: 'ping' }, 'toolu_a'), say('pong received')], [toolsPlugin([echo]), allowAll]);
    const result = await runAgent(kernel, session, 'use echo');
    expect(result).toMatchObject({ subtype: 'success', result: 'pong received', numTurns: 2 });
    expect(toolResults(server!.messageRequests()[1].body)).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'echo: ping' }]);
  });

  it('pause_turn continues with the paused assistant message sent back', async () => {
    const { kernel, session } = await setup([say('thinking hard', { stopReason: 'pause_turn' }), say('finished')]);
    const result = await runAgent(kernel, session, 'long task');
    expect(result).toMatchObject({ subtype: 'success', result: 'finished', numTurns: 2 });
    const second = plainMessages(server!.messageRequests()[1].body.messages);
    expect(second[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'thinking hard' }] });
  });

  it('refusal stops and shows the refusal', async () => {
    const { kernel, session, events } = await setup([say('I cannot help with that.', { stopReason: 'refusal' })]);
    const result = await runAgent(kernel, session, 'bad request');
    expect(result).toMatchObject({ subtype: 'success', refusal: true, result: 'I cannot help with that.', stopReason: 'refusal' });
    expect(events.some((e) => e.type === 'refusal')).toBe(true);
  });

  it('max_tokens asks compaction for room, then retries, bounded', async () => {
    const compactions: string[] = [];
    const compactor: Plugin = {
      name: 'fake-compactor',
      kernel: '^1.0.0',
      apply: (k) => k.services.provide('compaction', { compact: async (_s, o) => (compactions.push(o.trigger), true) }),
    };
    const { kernel, session } = await setup([say('part one', { stopReason: 'max_tokens' }), say('part two')], [compactor]);
    const result = await runAgent(kernel, session, 'write a lot');
    expect(result).toMatchObject({ subtype: 'success', result: 'part two', numTurns: 2 });
    expect(compactions).toEqual(['overflow']);
    const retried = plainMessages(server!.messageRequests()[1].body.messages);
    expect(retried[retried.length - 1]).toEqual({ role: 'user', content: expect.stringContaining('cut off at the output limit') });
  });

  it('max_tokens again and again ends with a clear error', async () => {
    const cut = () => say('more', { stopReason: 'max_tokens' });
    const { kernel, session } = await setup([cut(), cut(), cut(), cut(), cut()]);
    const result = await runAgent(kernel, session, 'endless');
    expect(result).toMatchObject({ subtype: 'error_during_execution', isError: true, numTurns: 4 });
    expect(result.error).toBe('the model ran out of room (max_tokens) 3 times in a row');
  });

  it('a truncated tool call under max_tokens is answered with an error, not run', async () => {
    let ran = 0;
    const counting = defineTool({ ...echo, execute: async () => ((ran += 1), { content: 'ran' }) });
    const { kernel, session } = await setup([{ ...callTool('echo', { text: 'x' }, 'toolu_cut'), stopReason: 'max_tokens' }, say('ok')], [toolsPlugin([counting]), allowAll]);
    await runAgent(kernel, session, 'go');
    expect(ran).toBe(0);
    expect(toolResults(server!.messageRequests()[1].body)[0]).toMatchObject({ tool_use_id: 'toolu_cut', is_error: true });
  });

  it('a prompt-too-long error routes to compaction and retries', async () => {
    let compacted = 0;
    const compactor: Plugin = {
      name: 'fake-compactor',
      kernel: '^1.0.0',
      apply: (k) => k.services.provide('compaction', { compact: async () => ((compacted += 1), true) }),
    };
    const { kernel, session } = await setup(
      [{ status: 400, errorMessage: 'prompt is too long: 210000 tokens > 200000 maximum' }, say('fits now')],
      [compactor],
    );
    const result = await runAgent(kernel, session, 'big');
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ subtype: 'success', result: 'fits now', numTurns: 1 });
    expect(compacted).toBe(1);
  });

  it('--max-turns ends with error_max_turns', async () => {
    const { kernel, session } = await setup(
      [callTool('echo', { text: '1' }), callTool('echo', { text: '2' }), callTool('echo', { text: '3' })],
      [toolsPlugin([echo]), allowAll],
    );
    const result = await runAgent(kernel, session, 'loop', { maxTurns: 2 });
    expect(result).toMatchObject({ subtype: 'error_max_turns', isError: true, numTurns: 2 });
    expect(server!.messageRequests()).toHaveLength(2);
  });

  it("turns a tool takes from the run's allowance count against maxTurns; what it gives back does not", async () => {
    const seen: number[] = [];
    // A tool that runs model turns elsewhere (as a sub-agent does): takes 3, uses 2, gives 1 back.
    const delegate = defineTool({
      name: 'delegate',
      description: 'delegate',
      permission: 'read',
      input: z.object({}),
      execute: async (_input, ctx) => {
        const allowance = ctx.turn.turns!;
        seen.push(allowance.left());
        const taken = allowance.take(3);
        allowance.giveBack(taken - 2);
        seen.push(allowance.left());
        return { content: `took ${taken}` };
      },
    });
    const { kernel, session } = await setup(
      [callTool('delegate', {}), callTool('delegate', {}), callTool('delegate', {}), say('never')],
      [toolsPlugin([delegate]), allowAll],
    );
    const result = await runAgent(kernel, session, 'go', { maxTurns: 6 });
    // Turn 1: 5 left, 2 used → 3. Turn 2: 2 left, takes 2, uses 2 → 0. Then 2 own + 4 taken = 6: the limit.
    expect(seen).toEqual([5, 3, 2, 0]);
    expect(result).toMatchObject({ subtype: 'error_max_turns', numTurns: 2, toolTurns: 4, error: 'reached the maximum of 6 turns (4 of them by sub-agents)' });
    expect(server!.messageRequests()).toHaveLength(2);
  });

  it('no provider answering the query hook is a clear error', async () => {
    const kernel = testKernel([]);
    const session = await testSession(kernel);
    const result = await runAgent(kernel, session, 'hello');
    expect(result.error).toMatch(/no plugin answered the query hook/);
  });
});

describe('tool calls of one response', () => {
  it('runs read calls concurrently', async () => {
    // Each call waits until the other has started: only a concurrent run lets both finish without the fallback.
    const started = new Set<string>();
    const waiters: Array<() => void> = [];
    const rendezvous = defineTool({
      name: 'rendezvous',
      description: 'waits for its partner',
      permission: 'read',
      input: z.object({ me: z.string() }),
      execute: async ({ me }) => {
        started.add(me);
        waiters.splice(0).forEach((w) => w());
        const met = await new Promise<boolean>((resolve) => {
          if (started.size === 2) return resolve(true);
          waiters.push(() => resolve(true));
          setTimeout(() => resolve(false), 5000);
        });
        return { content: met ? 'met' : 'alone' };
      },
    });
    const { kernel, session } = await setup(
      [callTools({ name: 'rendezvous', input: { me: 'a' }, id: 't1' }, { name: 'rendezvous', input: { me: 'b' }, id: 't2' }), say('done')],
      [toolsPlugin([rendezvous]), allowAll],
    );
    await runAgent(kernel, session, 'go');
    const results = toolResults(server!.messageRequests()[1].body);
    expect(results.map((r) => [r.tool_use_id, r.content])).toEqual([['t1', 'met'], ['t2', 'met']]);
  });

  it('runs a batch with a write call in order, one at a time', async () => {
    const log: string[] = [];
    const step = (name: string, permission: 'read' | 'write') =>
      defineTool({
        name,
        description: name,
        permission,
        input: z.object({}),
        execute: async () => {
          log.push(`start ${name}`);
          await new Promise((r) => setTimeout(r, 5));
          log.push(`end ${name}`);
          return { content: name };
        },
      });
    const { kernel, session } = await setup(
      [callTools({ name: 'w1', input: {} }, { name: 'r1', input: {} }, { name: 'w2', input: {} }), say('ok')],
      [toolsPlugin([step('w1', 'write'), step('r1', 'read'), step('w2', 'write')]), allowAll],
    );
    await runAgent(kernel, session, 'go');
    expect(log).toEqual(['start w1', 'end w1', 'start r1', 'end r1', 'start w2', 'end w2']);
  });

  it('gives exactly one result per tool_use, in call order, whatever happens', async () => {
    const thrower = defineTool({ name: 'thrower', description: 't', permission: 'read', input: z.object({}), execute: async () => { throw new Error('disk on fire'); } });
    const forbidden = defineTool({ ...echo, name: 'forbidden' });
    const policy: Plugin = {
      name: 'policy',
      kernel: '^1.0.0',
      apply: (k) =>
        k.hooks.prePermission.tapPromise('policy', async (call) =>
          call.name === 'forbidden' ? { behavior: 'deny', reason: 'Permission denied: forbidden is off limits' } : { behavior: 'allow' },
        ),
    };
    const { kernel, session } = await setup(
      [
        callTools(
          { name: 'echo', input: { text: 'fine' }, id: 'ok1' },
          { name: 'forbidden', input: { text: 'x' }, id: 'denied1' },
          { name: 'echo', input: { text: 42 }, id: 'invalid1' },
          { name: 'thrower', input: {}, id: 'threw1' },
          { name: 'nonexistent', input: {}, id: 'unknown1' },
        ),
        say('handled'),
      ],
      [toolsPlugin([echo, thrower, forbidden]), policy],
    );
    const result = await runAgent(kernel, session, 'go');
    const results = toolResults(server!.messageRequests()[1].body);
    expect(results.map((r) => r.tool_use_id)).toEqual(['ok1', 'denied1', 'invalid1', 'threw1', 'unknown1']);
    expect(results[0]).toEqual({ type: 'tool_result', tool_use_id: 'ok1', content: 'echo: fine' });
    expect(results[1]).toMatchObject({ is_error: true, content: 'Permission denied: forbidden is off limits' });
    expect(results[2]).toMatchObject({ is_error: true, content: 'Invalid input for tool echo: text: Invalid input: expected string, received number' });
    expect(results[3]).toMatchObject({ is_error: true, content: 'Error: disk on fire' });
    expect(results[4]).toMatchObject({ is_error: true, content: expect.stringContaining('Unknown tool "nonexistent"') });
    expect(result.permissionDenials).toEqual([{ tool_name: 'forbidden', tool_use_id: 'denied1', tool_input: { text: 'x' } }]);
  });

  it("runs a call by Claude Code's name for a tool as a call of Keel's tool: judged, run and reported under Keel's name", async () => {
    const readFile = defineTool({ ...echo, name: 'read_file' });
    const judged: string[] = [];
    const policy: Plugin = {
      name: 'policy',
      kernel: '^1.0.0',
      apply: (k) =>
        k.hooks.prePermission.tapPromise('policy', async (call) => {
          judged.push(call.name);
          return { behavior: 'allow' };
        }),
    };
    const { kernel, session } = await setup([callTools({ name: 'Read', input: { text: 'aliased' }, id: 'r1' }), say('done')], [toolsPlugin([readFile]), policy]);
    const result = await runAgent(kernel, session, 'go');
    expect(result.result).toBe('done');
    expect(judged).toEqual(['read_file']);
    expect(toolResults(server!.messageRequests()[1].body)).toEqual([{ type: 'tool_result', tool_use_id: 'r1', content: 'echo: aliased' }]);
  });

  it('fails closed when no permission plugin decides, and asks through askUser when told to', async () => {
    const asker: Plugin = {
      name: 'asker',
      kernel: '^1.0.0',
      apply(k) {
        k.hooks.prePermission.tapPromise('asker', async (call) => (call.input as { text: string }).text === 'ask' ? { behavior: 'ask' } : undefined);
        k.hooks.askUser.tapPromise('asker', async () => ({ kind: 'permission', choice: 'allow_once' }));
      },
    };
    const { kernel, session, events } = await setup(
      [callTools({ name: 'echo', input: { text: 'silent' }, id: 'a' }, { name: 'echo', input: { text: 'ask' }, id: 'b' }), say('ok')],
      [toolsPlugin([echo]), asker],
    );
    await runAgent(kernel, session, 'go');
    const results = toolResults(server!.messageRequests()[1].body);
    expect(results[0]).toMatchObject({ is_error: true, content: 'Permission denied: no permission policy allowed echo' });
    expect(results[1]).toEqual({ type: 'tool_result', tool_use_id: 'b', content: 'echo: ask' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'permission', source: 'user', choice: 'allow_once' }));
  });

  it('denies an ask that nobody can answer (headless)', async () => {
    const askAll: Plugin = { name: 'ask-all', kernel: '^1.0.0', apply: (k) => k.hooks.prePermission.tapPromise('ask-all', async () => ({ behavior: 'ask' })) };
    const { kernel, session } = await setup([callTool('echo', { text: 'x' }, 'q1'), say('ok')], [toolsPlugin([echo]), askAll]);
    const result = await runAgent(kernel, session, 'go');
    expect(toolResults(server!.messageRequests()[1].body)[0]).toMatchObject({ is_error: true, content: expect.stringContaining("needs the user's approval") });
    expect(result.permissionDenials).toHaveLength(1);
  });
});

describe('abort', () => {
  it('stops the model stream at once and ends the run as aborted', async () => {
    const controller = new AbortController();
    const { kernel, session, events } = await setup([say('a long answer that streams slowly, piece by piece', { eventDelayMs: 200 })]);
    kernel.observe((e) => { if (e.type === 'text_delta') controller.abort(); });
    const result = await runAgent(kernel, session, 'talk', { signal: controller.signal });
    expect(result).toMatchObject({ subtype: 'error_during_execution', aborted: true });
    expect(events.filter((e) => e.type === 'assistant_message')).toHaveLength(0);
  });

  it('never starts a queued write after the user interrupts the one before it', async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const writer = defineTool({
      name: 'writer',
      description: 'writes, slowly',
      permission: 'write',
      input: z.object({ n: z.number() }),
      execute: (i, ctx) =>
        new Promise((resolve, reject) => {
          ran.push(`start ${i.n}`);
          if (i.n === 1) setTimeout(() => controller.abort(), 5);
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
          if (ctx.signal.aborted) reject(new Error('aborted'));
        }),
    });
    const { kernel, session } = await setup([callTools({ name: 'writer', input: { n: 1 }, id: 'w1' }, { name: 'writer', input: { n: 2 }, id: 'w2' })], [toolsPlugin([writer]), allowAll]);
    const result = await runAgent(kernel, session, 'go', { signal: controller.signal });
    expect(result.aborted).toBe(true);
    expect(ran).toEqual(['start 1']);
    const last = session.messages[session.messages.length - 1];
    expect(last.content).toEqual([
      { type: 'tool_result', tool_use_id: 'w1', content: 'Interrupted by the user.', is_error: true },
      { type: 'tool_result', tool_use_id: 'w2', content: 'Interrupted by the user before this tool ran.', is_error: true },
    ]);
  });

  it('calls waiting on a permission question when the user interrupts get "Interrupted" results, not denials', async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const asked: string[] = [];
    const askFirst: Plugin = {
      name: 'ask-first',
      kernel: '^1.0.0',
      apply(k) {
        k.hooks.prePermission.tapPromise('ask-first', async (call) => (call.id === 'p1' ? { behavior: 'ask' } : { behavior: 'allow' }));
        // The question is pending when the user interrupts; a frontend then answers nothing.
        k.hooks.askUser.tapPromise('ask-first', async (question) => {
          asked.push(question.kind === 'permission' ? question.call.id : '?');
          setTimeout(() => controller.abort(), 5);
          await new Promise((resolve) => controller.signal.addEventListener('abort', resolve));
          return undefined;
        });
      },
    };
    const counted = defineTool({ ...echo, execute: async ({ text }) => (ran.push(text), { content: text }) });
    const { kernel, session } = await setup(
      [callTools({ name: 'echo', input: { text: 'one' }, id: 'p1' }, { name: 'echo', input: { text: 'two' }, id: 'p2' }, { name: 'echo', input: { text: 'three' }, id: 'p3' })],
      [toolsPlugin([counted]), askFirst],
    );
    const result = await runAgent(kernel, session, 'go', { signal: controller.signal });
    expect(result.aborted).toBe(true);
    expect(asked).toEqual(['p1']);
    expect(ran).toEqual([]);
    expect(result.permissionDenials).toEqual([]);
    const interrupted = 'Interrupted by the user before this tool ran.';
    expect(session.messages[session.messages.length - 1]!.content).toEqual(
      ['p1', 'p2', 'p3'].map((id) => ({ type: 'tool_result', tool_use_id: id, content: interrupted, is_error: true })),
    );
  });

  it('interrupts a running tool and still answers every tool_use', async () => {
    const controller = new AbortController();
    const slow = defineTool({
      name: 'slow',
      description: 'waits for abort',
      permission: 'read',
      input: z.object({}),
      execute: (_i, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    const { kernel, session } = await setup([callTools({ name: 'slow', input: {}, id: 's1' }, { name: 'slow', input: {}, id: 's2' })], [toolsPlugin([slow]), allowAll]);
    kernel.observe((e) => { if (e.type === 'tool_start') setTimeout(() => controller.abort(), 10); });
    const result = await runAgent(kernel, session, 'go', { signal: controller.signal });
    expect(result.aborted).toBe(true);
    const last = session.messages[session.messages.length - 1];
    expect((last.content as Array<{ tool_use_id: string; is_error: boolean }>).map((b) => [b.tool_use_id, b.is_error])).toEqual([['s1', true], ['s2', true]]);
  });
});
