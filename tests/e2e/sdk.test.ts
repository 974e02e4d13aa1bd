import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest, type ScriptStep } from '../helpers/anthropic-server.js';
import { collect } from '../helpers/cli.js';
import { routeConversations, toolResultsOf } from '../helpers/conversations.js';
import { useScriptedProjects } from '../helpers/project.js';
import { spawn } from 'node:child_process';
import { KEEL_BIN, cleanEnv } from '../helpers/cli.js';
import { SDK_MAX_LINE_BYTES } from '../../plugins/sdk/lines.js';

const prepare = useScriptedProjects();

/** The scripted model of the SDK scenario: two writes asked about, one write in edits mode, a hung call, a reply. */
function scenario(onHang: () => void): ScriptStep[] {
  return [
    callTool('write_file', { path: 'a.txt', content: 'A' }, 'toolu_a'),
    callTool('write_file', { path: 'b.txt', content: 'B' }, 'toolu_b'),
    say('turn one done'),
    callTool('write_file', { path: 'c.txt', content: 'C' }, 'toolu_c'),
    () => {
      onHang();
      return { fault: 'hang' };
    },
    say('still here'),
  ];
}

/** A host speaking the protocol over the child's pipes: it sends lines and waits for matching messages. */
class LineHost {
  readonly seen: any[] = [];
  private waiters: Array<{ match: (m: any) => boolean; resolve: (m: any) => void }> = [];
  constructor(readonly child: ReturnType<typeof spawn>) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const message = JSON.parse(line);
      this.seen.push(message);
      for (const waiter of [...this.waiters]) {
        if (waiter.match(message)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
      }
    });
  }
  send(value: unknown): void {
    this.child.stdin!.write(typeof value === 'string' ? `${value}\n` : `${JSON.stringify(value)}\n`);
  }
  next(match: (m: any) => boolean): Promise<any> {
    const found = this.seen.find(match);
    if (found) {
      this.seen.splice(this.seen.indexOf(found), 1);
      return Promise.resolve(found);
    }
    return new Promise((resolve) => this.waiters.push({ match, resolve: (m) => (this.seen.splice(this.seen.indexOf(m), 1), resolve(m)) }));
  }
}

const user = (content: string) => ({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: '' });

describe('SDK mode (stream-json in and out)', () => {
  it('serves a host: turns, can_use_tool allow and deny, interrupt, permission mode, malformed lines', async () => {
    let hung!: () => void;
    const hanging = new Promise<void>((resolve) => (hung = resolve));
    const { env, ws, server } = await prepare(scenario(() => hung()));
    const child = spawn(KEEL_BIN, ['--input-format=stream-json', '--output-format', 'stream-json', '--verbose', '--permission-prompt-tool', 'stdio'], {
      cwd: ws.dir,
      env: cleanEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exit = collect(child, 60_000);
    const host = new LineHost(child);

    host.send({ type: 'control_request', request_id: 'init', request: { subtype: 'initialize', systemPrompt: ['You are a test host agent.', 'Be brief.'], appendSystemPrompt: 'APPENDED', hooks: { PreToolUse: [] } } });
    expect(await host.next((m) => m.type === 'control_response')).toMatchObject({ response: { subtype: 'success', request_id: 'init', response: { ignored: ['hooks'] } } });
    host.send('{not json');
    expect((await host.next((m) => m.type === 'system' && m.subtype === 'error')).error).toMatch(/^stdin line 2: not valid JSON/);
    host.send({ type: 'control_request', request_id: 'odd', request: { subtype: 'rewind_files' } });
    expect(await host.next((m) => m.type === 'control_response')).toMatchObject({ response: { subtype: 'error', request_id: 'odd', error: expect.stringContaining('unknown control request subtype "rewind_files"') } });

    host.send(user('TURN1 write two files'));
    const init = await host.next((m) => m.type === 'system' && m.subtype === 'init');
    expect(init).toMatchObject({ cwd: ws.dir, permissionMode: 'ask', tools: expect.arrayContaining(['write_file', 'agent']) });
    const askA = await host.next((m) => m.type === 'control_request');
    expect(askA.request).toMatchObject({ subtype: 'can_use_tool', tool_name: 'write_file', input: { path: 'a.txt', content: 'A' }, tool_use_id: 'toolu_a' });
    host.send({ type: 'control_response', response: { subtype: 'success', request_id: askA.request_id, response: { behavior: 'allow', updatedInput: { path: 'a.txt', content: 'A edited by the host' } } } });
    const askB = await host.next((m) => m.type === 'control_request');
    expect(askB.request).toMatchObject({ tool_name: 'write_file', tool_use_id: 'toolu_b' });
    host.send({ type: 'control_response', response: { subtype: 'success', request_id: askB.request_id, response: { behavior: 'deny', message: 'not b, please' } } });
    const first = await host.next((m) => m.type === 'result');
    expect(first).toMatchObject({ subtype: 'success', result: 'turn one done', session_id: init.session_id, num_turns: 3 });
    expect(readFileSync(ws.path('a.txt'), 'utf8')).toBe('A edited by the host');
    expect(existsSync(ws.path('b.txt'))).toBe(false);
    expect(toolResultsOf(server.messageRequests()[2]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('not b, please') });
    const system = server.messageRequests()[0]!.body.system.map((b: { text: string }) => b.text);
    expect(system[0]).toBe('You are a test host agent.\n\nBe brief.');
    expect(system[system.length - 1]).toBe('APPENDED');

    host.send({ type: 'control_request', request_id: 'mode', request: { subtype: 'set_permission_mode', mode: 'acceptEdits' } });
    expect(await host.next((m) => m.type === 'control_response')).toMatchObject({ response: { subtype: 'success', request_id: 'mode', response: { mode: 'edits' } } });
    host.send({ type: 'control_request', request_id: 'bad-mode', request: { subtype: 'set_permission_mode', mode: 'yolo' } });
    expect(await host.next((m) => m.type === 'control_response')).toMatchObject({ response: { subtype: 'error', request_id: 'bad-mode' } });

    host.send(user('TURN2 write c then hang'));
    await hanging;
    // In edits mode the write was not asked about.
    expect(readFileSync(ws.path('c.txt'), 'utf8')).toBe('C');
    host.send({ type: 'control_request', request_id: 'stop', request: { subtype: 'interrupt' } });
    expect(await host.next((m) => m.type === 'control_response' && m.response.request_id === 'stop')).toMatchObject({ response: { subtype: 'success' } });
    expect(await host.next((m) => m.type === 'result')).toMatchObject({ subtype: 'error_during_execution', is_error: true });

    host.send(user('TURN3 still there?'));
    expect(await host.next((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'still here', session_id: init.session_id });
    expect(host.seen.filter((m) => m.type === 'control_request')).toEqual([]);
    child.stdin!.end();
    const run = await exit;
    expect(run.code).toBe(0);
    // Same session throughout: the third turn's request carries the earlier turns.
    const last: RecordedRequest = server.messageRequests()[5]!;
    expect(JSON.stringify(last.body.messages)).toContain('TURN1 write two files');
  });

  it('streams partial messages and relays a sub-agent permission question to the host, labelled', async () => {
    const { env, ws } = await prepare([], {
      route: routeConversations({
        PARENT: [callTool('agent', { task: 'CHILD write a file' }, 'toolu_agent'), say('the child is done')],
        CHILD: [callTool('write_file', { path: 'from-child.txt', content: 'hi' }, 'toolu_cw'), say('child wrote')],
      }),
    });
    const child = spawn(KEEL_BIN, ['--input-format', 'stream-json', '--output-format', 'stream-json', '--include-partial-messages', '--permission-prompt-tool', 'stdio', '--allowedTools', 'Task'], {
      cwd: ws.dir,
      env: cleanEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exit = collect(child, 60_000);
    const host = new LineHost(child);
    host.send(user('PARENT delegate'));
    const ask = await host.next((m) => m.type === 'control_request');
    expect(ask.request).toMatchObject({
      subtype: 'can_use_tool',
      tool_name: 'write_file',
      tool_use_id: 'toolu_cw',
      subagent: { name: 'general', parent_tool_use_id: 'toolu_agent' },
      decision_reason: expect.stringContaining('sub-agent "general" asks'),
    });
    host.send({ type: 'control_response', response: { subtype: 'success', request_id: ask.request_id, response: { behavior: 'allow' } } });
    expect(await host.next((m) => m.type === 'result' && !m.parent_tool_use_id)).toMatchObject({ subtype: 'success', result: 'the child is done' });
    child.stdin!.end();
    expect((await exit).code).toBe(0);
    expect(readFileSync(ws.path('from-child.txt'), 'utf8')).toBe('hi');
    const childLines = host.seen.filter((m) => m.parent_tool_use_id === 'toolu_agent');
    expect(childLines.map((m) => m.type)).toEqual(expect.arrayContaining(['system', 'assistant', 'user', 'result']));
    const deltas = host.seen.filter((m) => m.type === 'stream_event' && !m.parent_tool_use_id).map((m) => m.event);
    expect(deltas[0]).toMatchObject({ type: 'message_start' });
    expect(deltas).toContainEqual({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_agent', input: {} } });
    const text = deltas.filter((e) => e.delta?.type === 'text_delta').map((e) => e.delta.text).join('');
    expect(text).toBe('the child is done');
    expect(deltas[deltas.length - 1]).toEqual({ type: 'message_stop' });
  });

  it('KEEL_SDK_MODE=1 selects SDK mode without flags', async () => {
    const { env, ws } = await prepare([say('sdk by env')]);
    const child = spawn(KEEL_BIN, [], { cwd: ws.dir, env: cleanEnv({ ...env, KEEL_SDK_MODE: '1' }), stdio: ['pipe', 'pipe', 'pipe'] });
    const exit = collect(child);
    child.stdin!.end(`${JSON.stringify(user('hello'))}\n`);
    const run = await exit;
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['system', 'assistant', 'result']);
    expect(lines[2]).toMatchObject({ subtype: 'success', result: 'sdk by env' });
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s interrupts the running turn, prints its result and exits %i while stdin is still open', async (signal, code) => {
    let hung!: () => void;
    const hanging = new Promise<void>((resolve) => (hung = resolve));
    const { env, ws } = await prepare([() => (hung(), { fault: 'hang' })]);
    const child = spawn(KEEL_BIN, ['--input-format', 'stream-json', '--output-format', 'stream-json'], { cwd: ws.dir, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    const exit = collect(child);
    child.stdin!.write(`${JSON.stringify(user('wait forever'))}\n`);
    await hanging;
    child.kill(signal);
    const run = await exit;
    expect(run.code).toBe(code);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[lines.length - 1]).toMatchObject({ type: 'result', subtype: 'error_during_execution' });
  });
});

describe('SDK mode: the exit code when stdin ends', () => {
  it('is 1 when the last turn failed, 0 when the last turn succeeded after a failed one', async () => {
    const failing = { status: 400, errorType: 'invalid_request_error', errorMessage: 'the scripted API refuses this' };
    for (const [script, expected] of [
      [[say('fine'), failing], 1],
      [[failing, say('fine')], 0],
    ] as const) {
      const { env, ws } = await prepare([...script]);
      const child = spawn(KEEL_BIN, ['--input-format', 'stream-json', '--output-format', 'stream-json'], { cwd: ws.dir, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
      const exit = collect(child, 60_000);
      const host = new LineHost(child);
      host.send(user('one'));
      await host.next((m) => m.type === 'result');
      host.send(user('two'));
      const last = await host.next((m) => m.type === 'result');
      expect(last.is_error).toBe(expected === 1);
      child.stdin!.end();
      expect((await exit).code).toBe(expected);
    }
  });

  it('names every mode set_permission_mode takes, plan included, when it gets one it does not know', async () => {
    const { env, ws } = await prepare([say('planned')]);
    const child = spawn(KEEL_BIN, ['--input-format', 'stream-json', '--output-format', 'stream-json'], { cwd: ws.dir, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    const exit = collect(child, 60_000);
    const host = new LineHost(child);
    host.send({ type: 'control_request', request_id: 'bad', request: { subtype: 'set_permission_mode', mode: 'yolo' } });
    expect((await host.next((m) => m.type === 'control_response')).response).toEqual({
      subtype: 'error',
      request_id: 'bad',
      error: 'set_permission_mode: unknown mode "yolo" (auto, edits, ask, manual, plan, default, acceptEdits, bypassPermissions)',
    });
    host.send({ type: 'control_request', request_id: 'plan', request: { subtype: 'set_permission_mode', mode: 'plan' } });
    expect((await host.next((m) => m.type === 'control_response')).response).toMatchObject({ subtype: 'success', request_id: 'plan', response: { mode: 'plan' } });
    host.send(user('plan it'));
    expect(await host.next((m) => m.type === 'system' && m.subtype === 'init')).toMatchObject({ permissionMode: 'plan' });
    expect(await host.next((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'planned' });
    child.stdin!.end();
    expect((await exit).code).toBe(0);
  });
});

describe('SDK mode and lines that never end', () => {
  const limitText = `${SDK_MAX_LINE_BYTES / (1024 * 1024)} MiB (${SDK_MAX_LINE_BYTES} bytes)`;

  it('a line of three times the cap is dropped as it comes (memory stays bounded) and named; a line of exactly the cap and the next turn are served', async () => {
    const { env, ws, server } = await prepare([say('after the flood'), say('at the cap')]);
    const child = spawn(KEEL_BIN, ['--input-format=stream-json', '--output-format', 'stream-json'], { cwd: ws.dir, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    const exit = collect(child, 120_000);
    const host = new LineHost(child);
    host.send({ type: 'control_request', request_id: 'init', request: { subtype: 'initialize' } });
    await host.next((m) => m.type === 'control_response');
    const highWater = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]);
    const before = highWater();
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    for (let sent = 0; sent < 3 * SDK_MAX_LINE_BYTES; sent += chunk.byteLength) {
      if (!child.stdin!.write(chunk)) await new Promise((resolve) => child.stdin!.once('drain', resolve));
    }
    child.stdin!.write('\n');
    expect((await host.next((m) => m.type === 'system' && m.subtype === 'error')).error).toBe(`stdin line 2: longer than ${limitText}, the limit for one line; skipped`);
    // Never held whole: at most the cap's worth (and its copies), not the 96 MiB that came.
    expect(highWater() - before).toBeLessThan((2.5 * SDK_MAX_LINE_BYTES) / 1024);
    host.send(user('after the flood'));
    expect(await host.next((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'after the flood' });

    // A user message whose line is exactly the cap, padded in a field the protocol ignores.
    const shape = (pad: string) => JSON.stringify({ ...user('at the cap'), pad });
    const atCap = shape('x'.repeat(SDK_MAX_LINE_BYTES - shape('').length));
    expect(Buffer.byteLength(atCap)).toBe(SDK_MAX_LINE_BYTES);
    host.send(atCap);
    expect(await host.next((m) => m.type === 'result')).toMatchObject({ subtype: 'success', result: 'at the cap' });
    expect(server.messageRequests()).toHaveLength(2);
    child.stdin!.end();
    const run = await exit;
    expect(run.code).toBe(0);
    expect(host.seen.filter((m) => m.type === 'system' && m.subtype === 'error')).toEqual([]);
  }, 120_000);
});
