/**
 * An ACP client that goes away mid-turn, names sessions it does not own, or answers Keel's fs and terminal requests
 * with nonsense, against the built `keel acp`: every fault is a one-line error or a JSON-RPC error naming what is
 * wrong, the session data is kept, and nothing hangs or keeps running.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectDir } from '../../../plugins/session-store/paths.js';
import { callTool, say } from '../../helpers/anthropic-server.js';
import { rawAcp } from '../../helpers/acp-raw.js';
import { useScriptedProjects } from '../../helpers/project.js';
import { until } from '../../helpers/until.js';

const prepare = useScriptedProjects();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
const refuse = () => ({ error: { code: -32601, message: 'not offered' } });

/** A shell command that waits for `go`, then writes `side-effect`; `marker` finds its process. */
function waitingCommand(): { command: string; marker: string } {
  const marker = `keel-acp-gone-${process.pid}-${Math.random().toString(36).slice(2)}`;
  return { marker, command: `: ${marker}; while [ ! -e go ]; do sleep 0.05; done; echo late > side-effect` };
}
const running = (marker: string) => spawnSync('pgrep', ['-f', marker]).status === 0;
const locks = (home: string, dir: string) => readdirSync(projectDir(home, dir)).filter((name) => name.endsWith('.lock'));
const sessionText = (home: string, dir: string, id: string) => readFileSync(path.join(projectDir(home, dir), `${id}.jsonl`), 'utf8');

async function opened(cwd: string, env: Record<string, string>, answer: Parameters<typeof rawAcp>[2] = refuse, clientCapabilities: object = {}) {
  const acp = rawAcp(cwd, env, answer, children);
  await acp.request('initialize', { protocolVersion: 1, clientCapabilities });
  const { result } = await acp.request('session/new', { cwd, mcpServers: [] });
  return { acp, sessionId: result.sessionId as string };
}

describe('keel acp and an editor that goes away mid-turn', () => {
  it('stops reading stdout while a command runs: the command is killed, the lock freed, one line on stderr, exit 141', async () => {
    const { command, marker } = waitingCommand();
    const { ws, env } = await prepare([callTool('bash', { command }, 'toolu_wait'), say('never reached')]);
    const { acp, sessionId } = await opened(ws.dir, env);
    await acp.request('session/set_mode', { sessionId, modeId: 'auto' });
    void acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'PROMPT-OF-THE-GONE-EDITOR' }] });
    await until(() => running(marker), 'the command to start');
    acp.child.stdout.destroy();
    // The editor still writes: Keel's answer meets the closed pipe while the command runs.
    acp.write(`${JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'session/set_mode', params: { sessionId, modeId: 'ask' } })}\n`);
    expect(await acp.exited).toBe(141);
    expect(acp.stderr()).toBe('keel: acp: the editor stopped reading stdout (EPIPE): every session was stopped and its tools ended\n');
    expect(running(marker)).toBe(false);
    expect(locks(env.KEEL_HOME!, ws.dir)).toEqual([]);
    expect(sessionText(env.KEEL_HOME!, ws.dir, sessionId)).toContain('PROMPT-OF-THE-GONE-EDITOR');
    expect(existsSync(path.join(ws.dir, 'side-effect'))).toBe(false);
  });

  it('closes stdin while the model answers: the turn stops, the prompt is on file, the lock freed, exit 0', async () => {
    let asked!: () => void;
    const modelAsked = new Promise<void>((resolve) => (asked = resolve));
    const { ws, env } = await prepare([
      () => {
        asked();
        return { fault: 'hang' };
      },
    ]);
    const { acp, sessionId } = await opened(ws.dir, env);
    void acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'PROMPT-KEPT-ON-CLOSE' }] });
    await modelAsked;
    acp.child.stdin.end();
    expect(await acp.exited).toBe(0);
    expect(acp.stderr()).toBe('');
    expect(sessionText(env.KEEL_HOME!, ws.dir, sessionId)).toContain('PROMPT-KEPT-ON-CLOSE');
    expect(locks(env.KEEL_HOME!, ws.dir)).toEqual([]);
  });
});

describe('keel acp and an editor that closed its stderr', () => {
  it('goes on serving: the log is lost, the sessions are not', async () => {
    const { ws, env } = await prepare([say('still answering')]);
    // A plugin that logs a lot as each session starts: every line meets the closed pipe.
    writeFileSync(
      path.join(env.KEEL_HOME!, 'agent.config.mjs'),
      "export default { plugins: [{ name: 'noisy', kernel: '^1.0.0', apply(k) { k.hooks.sessionStart.tapPromise('noisy', async () => { for (let i = 0; i < 2000; i++) console.log('noise ' + 'x'.repeat(100)); }); } }] };\n",
    );
    const acp = rawAcp(ws.dir, env, refuse, children);
    await acp.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    acp.child.stderr.destroy();
    const { result } = await acp.request('session/new', { cwd: ws.dir, mcpServers: [] });
    expect((await acp.request('session/prompt', { sessionId: result.sessionId, prompt: [{ type: 'text', text: 'hi' }] })).result).toEqual({ stopReason: 'end_turn' });
    acp.child.stdin.end();
    expect(await acp.exited).toBe(0);
    expect(acp.nonJson).toEqual([]);
  });
});

describe('keel acp and a turn that ignores its cancellation', () => {
  it('leaves a few seconds after stdin closed, saying so, though a tool never settles', async () => {
    const { ws, env } = await prepare([callTool('read_file', { path: 'a.txt' }, 'toolu_stuck'), say('never reached')]);
    ws.write('a.txt', 'a');
    // A plugin whose toolExecute tap never settles and never looks at the abort signal.
    writeFileSync(
      path.join(env.KEEL_HOME!, 'agent.config.mjs'),
      "export default { plugins: [{ name: 'stuck', kernel: '^1.0.0', apply(k) { k.hooks.toolExecute.tapPromise({ name: 'stuck', stage: -1000 }, () => new Promise(() => {})); } }] };\n",
    );
    const { acp, sessionId } = await opened(ws.dir, env);
    void acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read a.txt' }] });
    await until(() => acp.messages.some((m) => m.params?.update?.toolCallId === 'toolu_stuck' && m.params.update.status === 'in_progress'), 'the stuck call to start');
    acp.child.stdin.end();
    expect(await acp.exited).toBe(0);
    expect(acp.stderr()).toContain('keel: acp: a session did not stop within 5 s of the connection closing (a tool or plugin ignores cancellation); Keel leaves without it');
  }, 30_000);
});

describe('keel acp stopped by a signal mid-command', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const)('%s: the command is killed, the prompt kept, the lock freed, exit %i', async (signal, code) => {
    const { command, marker } = waitingCommand();
    const { ws, env } = await prepare([callTool('bash', { command }, 'toolu_wait'), say('never reached')]);
    const { acp, sessionId } = await opened(ws.dir, env);
    await acp.request('session/set_mode', { sessionId, modeId: 'auto' });
    void acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'PROMPT-BEFORE-THE-SIGNAL' }] });
    try {
      await until(() => running(marker), 'the command to start');
      acp.child.kill(signal);
      expect(await acp.exited).toBe(code);
      expect(running(marker)).toBe(false);
    } finally {
      // Should the test fail with the command alive, it goes by its own pids.
      for (const pid of spawnSync('pgrep', ['-f', marker]).stdout.toString().split('\n').filter(Boolean)) process.kill(Number(pid), 'SIGKILL');
    }
    expect(locks(env.KEEL_HOME!, ws.dir)).toEqual([]);
    expect(sessionText(env.KEEL_HOME!, ws.dir, sessionId)).toContain('PROMPT-BEFORE-THE-SIGNAL');
    expect(acp.stderr()).not.toMatch(/\n\s+at /);
  });
});

describe('session/load of a session the editor does not hold whole', () => {
  it('refuses a prefix, a path, another project\'s session and a load while a prompt runs; the open session is untouched', async () => {
    let hung!: () => void;
    const hanging = new Promise<void>((resolve) => (hung = resolve));
    const { ws, env, server } = await prepare([
      say('first answer'),
      () => {
        hung();
        return { fault: 'hang' };
      },
      say('still the same session'),
    ]);
    const { acp, sessionId } = await opened(ws.dir, env);
    expect((await acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'FIRST' }] })).result).toEqual({ stopReason: 'end_turn' });
    const load = (id: unknown, cwd = ws.dir) => acp.request('session/load', { sessionId: id, cwd, mcpServers: [] });

    // A prefix resolves on the command line (`--resume`), never here: it would open a second writer of the file.
    expect((await load(sessionId.slice(0, 8))).error).toEqual({
      code: -32002,
      message: `session/load: no session "${sessionId.slice(0, 8)}" in this project (session/load takes a whole session id, as session/new answered it)`,
      data: { sessionId: sessionId.slice(0, 8) },
    });
    expect((await load('../../etc')).error).toMatchObject({ code: -32002, message: 'session/load: "../../etc" is not a session id (letters, digits, "-" and "_" only)' });
    expect((await load(42)).error).toMatchObject({ code: -32602, data: { sessionId: expect.anything() } });
    const elsewhere = path.join(ws.home, 'elsewhere');
    mkdirSync(elsewhere);
    expect((await load(sessionId, elsewhere)).error).toMatchObject({ code: -32002, message: `session/load: no session "${sessionId}" in this project (run keel sessions to list them)` });

    // A load that fails leaves the open session as it was, and one while a prompt runs is refused, not a cancel.
    const turn = acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'SECOND' }] });
    await hanging;
    expect((await load(sessionId)).error).toMatchObject({ code: -32600, message: expect.stringContaining(`session/load: a prompt is running in session "${sessionId}"`) });
    acp.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } })}\n`);
    expect((await turn).result).toEqual({ stopReason: 'cancelled' });
    expect((await acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'THIRD' }] })).result).toEqual({ stopReason: 'end_turn' });
    expect(JSON.stringify(server.messageRequests()[2]!.body.messages)).toContain('FIRST');

    // Two loads of one id at once, and a prompt before the load answered: the first load wins, the others wait their turn.
    const answers = [301, 302, 303].map((id) => new Promise<Record<string, any>>((resolve) => acp.waiters.set(id, resolve)));
    acp.write(
      [
        { jsonrpc: '2.0', id: 301, method: 'session/load', params: { sessionId, cwd: ws.dir, mcpServers: [] } },
        { jsonrpc: '2.0', id: 302, method: 'session/load', params: { sessionId, cwd: ws.dir, mcpServers: [] } },
        { jsonrpc: '2.0', id: 303, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'TOO-EARLY' }] } },
      ]
        .map((m) => `${JSON.stringify(m)}\n`)
        .join(''),
    );
    const [first, second, early] = await Promise.all(answers);
    expect(first!.result.modes.currentModeId).toBe('ask');
    expect(second!.error).toMatchObject({ code: -32600, message: expect.stringContaining(`session/load: session "${sessionId}" is being loaded already`) });
    expect(early!.error).toMatchObject({ code: -32600, message: expect.stringContaining(`session "${sessionId}" is being loaded (wait for the session/load answer)`) });

    // One writer per session file: the file holds each prompt once.
    acp.child.stdin.end();
    expect(await acp.exited).toBe(0);
    const file = sessionText(env.KEEL_HOME!, ws.dir, sessionId);
    expect(file.split('FIRST').length - 1).toBe(1);
    expect(file.split('THIRD').length - 1).toBe(1);
    expect(file).not.toContain('TOO-EARLY');
    expect(acp.nonJson).toEqual([]);
  });
});

describe("an editor's answers to Keel's fs and terminal requests", () => {
  it('a read answered without text, and a terminal without an id, fail their call naming the field; the session goes on', async () => {
    const { ws, env, server } = await prepare([
      callTool('read_file', { path: 'a.txt' }, 'toolu_number'),
      callTool('read_file', { path: 'a.txt' }, 'toolu_missing'),
      callTool('bash', { command: 'echo ran > ran.txt' }, 'toolu_term'),
      say('done'),
    ]);
    writeFileSync(path.join(ws.dir, 'a.txt'), 'on disk');
    let reads = 0;
    const { acp, sessionId } = await opened(
      ws.dir,
      env,
      (message) => {
        if (message.method === 'fs/read_text_file') return { result: reads++ === 0 ? { content: 5 } : {} };
        if (message.method === 'terminal/create') return { result: {} };
        return refuse();
      },
      { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    );
    await acp.request('session/set_mode', { sessionId, modeId: 'auto' });
    expect((await acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })).result).toEqual({ stopReason: 'end_turn' });
    const failed = acp.messages
      .filter((m) => m.method === 'session/update' && m.params.update.status === 'failed')
      .map((m) => [m.params.update.toolCallId, m.params.update.content?.[0]?.content?.text]);
    const abs = path.join(ws.dir, 'a.txt');
    expect(failed).toEqual([
      ['toolu_number', expect.stringContaining(`the editor's answer to fs/read_text_file for ${abs} has no text: content is a number, not a string`)],
      ['toolu_missing', expect.stringContaining(`the editor's answer to fs/read_text_file for ${abs} has no text: content is missing, not a string`)],
      ['toolu_term', expect.stringContaining("the editor's answer to terminal/create has no terminalId")],
    ]);
    expect(existsSync(path.join(ws.dir, 'ran.txt'))).toBe(false);
    expect(server.messageRequests()).toHaveLength(4);
    expect(acp.child.exitCode).toBe(null);
    acp.child.stdin.end();
    expect(await acp.exited).toBe(0);
  });
});

describe("the editor's fs and terminals only after the permission policy allowed the call", () => {
  it('a rejected read outside the project and a rejected write never reach the editor; a terminal past its timeout is killed', async () => {
    const { ws, env, server } = await prepare([
      callTool('read_file', { path: '../canary.txt' }, 'toolu_outside'),
      callTool('write_file', { path: 'w.txt', content: 'W' }, 'toolu_write'),
      callTool('bash', { command: 'sleep 30', timeout: 500 }, 'toolu_slow'),
      say('done'),
    ]);
    // A canary outside the project: its text must not reach the model, nor its path the editor.
    const canary = path.join(path.dirname(ws.dir), 'canary.txt');
    writeFileSync(canary, 'CANARY-OUTSIDE-THE-PROJECT');
    const fsRequests: Array<Record<string, any>> = [];
    const { acp, sessionId } = await opened(
      ws.dir,
      env,
      (message) => {
        if (message.method === 'fs/read_text_file' || message.method === 'fs/write_text_file') {
          fsRequests.push(message.params);
          return { result: message.method === 'fs/read_text_file' ? { content: 'FROM-THE-EDITOR' } : {} };
        }
        if (message.method === 'session/request_permission') {
          const bash = message.params.toolCall.toolCallId === 'toolu_slow';
          return { result: { outcome: { outcome: 'selected', optionId: bash ? 'allow_once' : 'reject_once' } } };
        }
        if (message.method === 'terminal/create') return { result: { terminalId: 't-slow' } };
        if (message.method === 'terminal/wait_for_exit') return undefined; // never exits on its own
        if (message.method === 'terminal/output') return { result: { output: 'partial', truncated: false } };
        if (message.method === 'terminal/kill' || message.method === 'terminal/release') return { result: {} };
        return refuse();
      },
      { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    );
    expect((await acp.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })).result).toEqual({ stopReason: 'end_turn' });
    expect(fsRequests).toEqual([]);
    const asked = acp.messages.filter((m) => m.method === 'session/request_permission').map((m) => m.params.toolCall.toolCallId);
    expect(asked).toEqual(['toolu_outside', 'toolu_write', 'toolu_slow']);
    const sent = JSON.stringify(server.messageRequests().map((r) => r.body.messages));
    expect(sent).not.toContain('CANARY-OUTSIDE-THE-PROJECT');
    expect(existsSync(path.join(ws.dir, 'w.txt'))).toBe(false);
    const methods = acp.messages.filter((m) => typeof m.method === 'string' && m.method.startsWith('terminal/')).map((m) => m.method);
    expect(methods).toEqual(expect.arrayContaining(['terminal/create', 'terminal/kill', 'terminal/release']));
    expect(sent).toContain('Command timed out after 500 ms');
    acp.child.stdin.end();
    expect(await acp.exited).toBe(0);
  });
});

describe('session/load after the editor went away', () => {
  it('replays the history, then the commands, the mode and the plan the session had', async () => {
    const todos = [
      { content: 'read the code', status: 'completed', activeForm: 'Reading the code' },
      { content: 'fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' },
    ];
    const { ws, env } = await prepare([callTool('todo_write', { todos }, 'toolu_plan'), say('planned')]);
    const first = await opened(ws.dir, env);
    await first.acp.request('session/set_mode', { sessionId: first.sessionId, modeId: 'edits' });
    expect((await first.acp.request('session/prompt', { sessionId: first.sessionId, prompt: [{ type: 'text', text: 'make a plan' }] })).result).toEqual({ stopReason: 'end_turn' });
    first.acp.child.stdin.end();
    expect(await first.acp.exited).toBe(0);

    const acp = rawAcp(ws.dir, env, refuse, children);
    await acp.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const loaded = await acp.request('session/load', { sessionId: first.sessionId, cwd: ws.dir, mcpServers: [] });
    expect(loaded.result.modes.currentModeId).toBe('edits');
    await until(() => acp.messages.some((m) => m.params?.update?.sessionUpdate === 'plan'), 'the plan');
    const kinds = acp.messages.filter((m) => m.method === 'session/update').map((m) => m.params.update.sessionUpdate);
    expect(kinds).toEqual(['user_message_chunk', 'tool_call', 'tool_call_update', 'agent_message_chunk', 'available_commands_update', 'current_mode_update', 'plan']);
    const plan = acp.messages.find((m) => m.params?.update?.sessionUpdate === 'plan')!.params.update;
    expect(plan.entries).toEqual([
      { content: 'read the code', priority: 'medium', status: 'completed' },
      { content: 'fix the bug', priority: 'medium', status: 'in_progress' },
    ]);
    acp.child.stdin.end();
    expect(await acp.exited).toBe(0);
  });
});
