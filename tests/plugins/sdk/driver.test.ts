/** The protocol driver in-process against the scripted server: every fault a host can cause, one by one. */
import { afterEach, describe, expect, it } from 'vitest';
import { startSession, type Plugin } from '../../../kernel/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import { ProtocolDriver } from '../../../plugins/sdk/driver.js';
import sdk, { type Incoming, type OutMessage } from '../../../plugins/sdk/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { AsyncQueue } from '../../../sdk/queue.js';
import { callTool, say, startAnthropicServer, type ScriptedServer, type ScriptStep } from '../../helpers/anthropic-server.js';
import { toolResultsOf } from '../../helpers/conversations.js';
import { testKernel } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let server: ScriptedServer | undefined;
let ws: Workspace | undefined;
const started: Array<{ server: ScriptedServer; ws: Workspace }> = [];
afterEach(async () => {
  for (const live of started.splice(0)) {
    await live.server.close();
    live.ws.cleanup();
  }
});

interface Host {
  send(value: unknown): void;
  end(): void;
  next(match: (m: OutMessage) => boolean): Promise<OutMessage>;
  exit: Promise<number>;
  out: OutMessage[];
}

async function host(script: ScriptStep[], opts: { askHost?: boolean; once?: boolean } = {}): Promise<Host> {
  server = await startAnthropicServer(script);
  ws = makeWorkspace({ git: true });
  started.push({ server, ws });
  const kernel = testKernel([queryAnthropic(), permissions(), toolsFs(), sdk(), shout], { baseURL: server.url, cwd: ws.dir, projectRoot: ws.dir });
  const input = new AsyncQueue<Incoming>();
  const out: OutMessage[] = [];
  const waiters: Array<{ match: (m: OutMessage) => boolean; resolve: (m: OutMessage) => void }> = [];
  let count = 0;
  const driver = new ProtocolDriver({
    kernel,
    input,
    write: (message) => {
      const waiter = waiters.find((w) => w.match(message));
      if (waiter) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      } else out.push(message);
    },
    startSession: (overrides) => startSession(kernel, overrides),
    signal: new AbortController().signal,
    askHost: opts.askHost ?? true,
    partial: false,
    once: opts.once ?? false,
    slashCommands: !(opts.once ?? false),
  });
  return {
    send: (value) => input.push({ where: `message ${++count}`, value }),
    end: () => input.end(),
    next: (match) => {
      const found = out.find(match);
      if (found) {
        out.splice(out.indexOf(found), 1);
        return Promise.resolve(found);
      }
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    exit: driver.run(),
    out,
  };
}

/** A slash command for the tests: `/shout x` answers `X!`, `/shout` alone fails. */
const shout: Plugin = {
  name: 'shout',
  kernel: '^1.0.0',
  apply: (k) =>
    k.commands.register({
      name: 'shout',
      description: 'upper-cases its words',
      run: async (args, ctx) => {
        if (!args) throw new Error('nothing to shout');
        ctx.print(`${args.toUpperCase()}!`);
      },
    }),
};

const user = (content: unknown) => ({ type: 'user', message: { role: 'user', content } });
const isError = (m: OutMessage) => m.type === 'system' && m.subtype === 'error';
const response = (m: OutMessage) => m.response as { subtype: string; request_id: string; error?: string; response?: Record<string, unknown> };
const answerTo = (request: OutMessage, body: Record<string, unknown>) => ({ type: 'control_response', response: { subtype: 'success', request_id: request.request_id, response: body } });

describe('the protocol driver', () => {
  it('names a message it cannot use and goes on', async () => {
    const h = await host([say('fine')]);
    h.send({ type: 'assistant', message: {} });
    expect((await h.next(isError)).error).toBe('message 1: unknown message type "assistant" (expected user, control_request or control_response)');
    h.send(user(''));
    expect((await h.next(isError)).error).toMatch(/^message 2: a user message needs message.content/);
    h.send({ type: 'control_response', response: { subtype: 'success', request_id: 'nobody' } });
    expect((await h.next(isError)).error).toBe('message 3: control_response for unknown request_id "nobody"');
    h.send({ type: 'control_request', request: { subtype: 'interrupt' } });
    expect((await h.next(isError)).error).toBe('message 4: a control_request needs a string request_id');
    h.send({ type: 'control_request', request_id: 'r5', request: {} });
    expect(response(await h.next((m) => m.type === 'control_response'))).toMatchObject({ subtype: 'error', request_id: 'r5', error: 'the control_request has no request.subtype' });
    h.send(user([{ type: 'text', text: 'hello' }]));
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'fine' });
    h.end();
    expect(await h.exit).toBe(0);
  });

  it('answers bad initialize and set_model requests with errors naming the field', async () => {
    const h = await host([say('as model x')]);
    h.send({ type: 'control_request', request_id: 'a', request: { subtype: 'initialize', systemPrompt: 42 } });
    expect(response(await h.next((m) => m.type === 'control_response'))).toMatchObject({ subtype: 'error', error: 'initialize: systemPrompt must be a string or an array of strings' });
    h.send({ type: 'control_request', request_id: 'b', request: { subtype: 'initialize', agents: { helper: { description: 'no prompt' } } } });
    expect(response(await h.next((m) => m.type === 'control_response'))).toMatchObject({ subtype: 'error', error: 'initialize: agents.helper needs a string description and prompt' });
    h.send({ type: 'control_request', request_id: 'c', request: { subtype: 'set_model', model: '' } });
    expect(response(await h.next((m) => m.type === 'control_response'))).toMatchObject({ subtype: 'error', error: expect.stringContaining('set_model: model must be a non-empty string') });
    h.send({ type: 'control_request', request_id: 'd', request: { subtype: 'set_model', model: 'claude-x' } });
    expect(response(await h.next((m) => m.type === 'control_response'))).toMatchObject({ subtype: 'success', response: { model: 'claude-x' } });
    h.send(user('which model?'));
    await h.next((m) => m.type === 'result');
    expect(server!.messageRequests()[0]!.body.model).toBe('claude-x');
    h.end();
    await h.exit;
  });

  it('denies a call when the host answers can_use_tool with nonsense, an error, or an input that does not validate', async () => {
    const h = await host([
      callTool('write_file', { path: 'a.txt', content: 'a' }, 'toolu_1'),
      callTool('write_file', { path: 'b.txt', content: 'b' }, 'toolu_2'),
      callTool('write_file', { path: 'c.txt', content: 'c' }, 'toolu_3'),
      say('gave up'),
    ]);
    h.send(user('write'));
    const first = (await h.next((m) => m.type === 'control_request')) as OutMessage;
    h.send(answerTo(first, { behavior: 'maybe' }));
    const second = await h.next((m) => m.type === 'control_request');
    h.send({ type: 'control_response', response: { subtype: 'error', request_id: second.request_id, error: 'host crashed' } });
    const third = await h.next((m) => m.type === 'control_request');
    h.send(answerTo(third, { behavior: 'allow', updatedInput: { path: 42 } }));
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ result: 'gave up' });
    const results = [1, 2, 3].map((i) => toolResultsOf(server!.messageRequests()[i]!)[0]!);
    expect(results[0]).toMatchObject({ is_error: true, content: expect.stringContaining('behavior "maybe" (expected "allow" or "deny")') });
    expect(results[1]).toMatchObject({ is_error: true, content: expect.stringContaining('the host did not allow it (host crashed)') });
    expect(results[2]).toMatchObject({ is_error: true, content: expect.stringContaining('The input the user approved is invalid') });
    h.end();
    await h.exit;
  });

  it("drops a host's answer that comes after an interrupt gave up on its question; an answer to an id never asked is still named", async () => {
    const h = await host([callTool('write_file', { path: 'late.txt', content: 'L' }, 'toolu_late'), say('never reached')]);
    h.send(user('write'));
    const asked = (await h.next((m) => m.type === 'control_request')) as OutMessage;
    h.send({ type: 'control_request', request_id: 'stop', request: { subtype: 'interrupt' } });
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ subtype: 'error_during_execution' });
    h.send(answerTo(asked, { behavior: 'allow' }));
    h.send(answerTo({ type: 'control_request', request_id: 'keel_req_99' }, { behavior: 'allow' }));
    expect(((await h.next(isError)) as OutMessage).error).toBe('message 4: control_response for unknown request_id "keel_req_99"');
    expect(h.out.filter(isError)).toEqual([]);
    h.end();
    await h.exit;
  });

  it('without --permission-prompt-tool stdio, a call that needs approval is denied without asking', async () => {
    const h = await host([callTool('write_file', { path: 'a.txt', content: 'a' }), say('ok')], { askHost: false });
    h.send(user('write'));
    await h.next((m) => m.type === 'result');
    expect(h.out.filter((m) => m.type === 'control_request')).toEqual([]);
    expect(toolResultsOf(server!.messageRequests()[1]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('cannot ask the user') });
    h.end();
    await h.exit;
  });

  it('runs a slash command a host sends as a user message, with its output as the result and no model turn', async () => {
    const h = await host([say('model answer')]);
    h.send(user('/shout hello there'));
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ subtype: 'success', is_error: false, result: 'HELLO THERE!', num_turns: 0 });
    h.send(user([{ type: 'text', text: '/shout' }]));
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ is_error: true, subtype: 'error_during_execution' });
    // A path is not a command: it goes to the model.
    h.send(user('/usr/bin is where it lives'));
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ result: 'model answer' });
    h.end();
    expect(await h.exit).toBe(0);
    expect(server!.messageRequests()).toHaveLength(1);
  });

  it('as a sub-agent, a task that looks like a slash command goes to the model: a model-written task never runs a command', async () => {
    const h = await host([say('did the task')], { once: true });
    h.send(user('/shout loosen everything'));
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ result: 'did the task' });
    expect(await h.exit).toBe(0);
    expect(JSON.stringify(server!.messageRequests()[0]!.body.messages)).toContain('/shout loosen everything');
  });

  it('as a sub-agent, takes one task, and exits 2 when the input ends without one', async () => {
    const h = await host([say('task done')], { once: true });
    h.send(user('the task'));
    h.send(user('another task'));
    expect((await h.next(isError)).error).toBe('message 2: a sub-agent takes one task; this message was ignored');
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ result: 'task done' });
    expect(await h.exit).toBe(0);

    const empty = await host([], { once: true });
    empty.end();
    expect(await empty.exit).toBe(2);
    expect(empty.out.find(isError)?.error).toBe('no task: the input ended before a user message arrived');
  });

  it('denies a call whose question is pending when the input ends, and still finishes the turn', async () => {
    const h = await host([callTool('write_file', { path: 'a.txt', content: 'a' }), say('after the denial')]);
    h.send(user('write'));
    await h.next((m) => m.type === 'control_request');
    h.end();
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ result: 'after the denial' });
    expect(toolResultsOf(server!.messageRequests()[1]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('the input ended before the host answered') });
    expect(await h.exit).toBe(0);
  });

  it('as a sub-agent, stops its run when the parent closes the input', async () => {
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const h = await host([() => (asked(), { fault: 'hang' })], { once: true });
    h.send(user('long task'));
    await waiting;
    h.end();
    expect(await h.next((m) => m.type === 'result')).toMatchObject({ subtype: 'error_during_execution', is_error: true });
    expect(await h.exit).toBe(1);
  });
});
