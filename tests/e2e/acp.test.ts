import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { callTool, say, type RecordedRequest, type ScriptedServer } from '../helpers/anthropic-server.js';
import { agentText, capabilities, startAcp, updatesOf, type AcpClientOptions, type AcpRun } from '../helpers/acp.js';
import { cleanEnv, KEEL_BIN, runKeel } from '../helpers/cli.js';
import { EVERYTHING, processesGone } from '../helpers/mcp.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
const runs: AcpRun[] = [];
afterEach(async () => {
  for (const run of runs.splice(0)) await run.close();
});

async function open(cwd: string, env: Record<string, string>, opts: AcpClientOptions = {}) {
  const run = startAcp(cwd, env, opts);
  runs.push(run);
  const init = await run.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: capabilities(opts) });
  return { run, init };
}

/** The tool_result blocks the model received in request `index`. */
function resultsIn(server: ScriptedServer, index: number): Array<{ content: unknown; is_error?: boolean }> {
  const messages = server.messageRequests()[index]!.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages[messages.length - 1]!.content as Array<{ type: string; content: unknown; is_error?: boolean }>;
  return last.filter((b) => b.type === 'tool_result');
}
const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));
const lastUserText = (request: RecordedRequest) => {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  return text(messages[messages.length - 1]!.content);
};

describe('keel acp (the SDK client)', () => {
  it('takes no arguments but --help, and says so', async () => {
    const { ws, env } = await prepare();
    const bad = await runKeel(['acp', '--model', 'x'], { cwd: ws.dir, env });
    expect(bad).toMatchObject({ code: 2, stdout: '', stderr: 'keel: acp: unexpected argument "--model" (keel acp takes none; configure Keel in agent.config.ts)\n' });
    const help = await runKeel(['acp', '--help'], { cwd: ws.dir, env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: keel acp');
  });

  it('initializes with the protocol version and honest capabilities, and refuses a session without a key', async () => {
    const { ws, env } = await prepare();
    const { run, init } = await open(ws.dir, { KEEL_HOME: env.KEEL_HOME!, ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL! });
    expect(init.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(init.agentCapabilities).toEqual({
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
    });
    expect(init.authMethods?.map((m) => m.id)).toEqual(['anthropic-api-key', 'keel-login']);
    await expect(run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] })).rejects.toMatchObject({ code: -32000, message: expect.stringContaining('no API key: set ANTHROPIC_API_KEY') });
    await expect(run.agent.request('authenticate', { methodId: 'keel-login' })).rejects.toMatchObject({ code: -32000, message: expect.stringContaining('run keel login') });
  });

  it('streams an edit and a bash call: permission allowed once, then rejected; diffs, kinds and statuses in the updates', async () => {
    const { ws, env, server } = await prepare([
      callTool('edit_file', { path: 'a.txt', old_string: 'hello', new_string: 'bye' }, 'call-edit'),
      callTool('bash', { command: 'echo ran > b.txt' }, 'call-bash'),
      say('All done.'),
    ]);
    ws.write('a.txt', 'hello world\n');
    const { run } = await open(ws.dir, env, { permission: (req) => (req.toolCall.toolCallId === 'call-edit' ? 'allow_once' : 'reject_once') });
    const { sessionId, modes } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    expect(modes?.currentModeId).toBe('ask');
    expect(modes?.availableModes.map((m) => m.id)).toEqual(['ask', 'edits', 'auto', 'manual', 'plan']);
    const { stopReason } = await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'edit and run' }] });
    expect(stopReason).toBe('end_turn');

    expect(readFileSync(ws.path('a.txt'), 'utf8')).toBe('bye world\n');
    expect(existsSync(ws.path('b.txt'))).toBe(false);
    expect(run.permissions.map((p) => p.options.map((o) => o.kind))).toEqual([
      ['allow_once', 'allow_always', 'reject_once', 'reject_always'],
      ['allow_once', 'allow_always', 'reject_once', 'reject_always'],
    ]);
    const calls = updatesOf(run, sessionId, 'tool_call');
    expect(calls.find((c) => c.toolCallId === 'call-edit')).toMatchObject({ kind: 'edit', title: 'Edit a.txt', locations: [{ path: ws.path('a.txt') }], status: 'pending' });
    expect(calls.find((c) => c.toolCallId === 'call-bash')).toMatchObject({ kind: 'execute', title: '`echo ran > b.txt`', status: 'pending' });
    const edits = updatesOf(run, sessionId, 'tool_call_update').filter((u) => u.toolCallId === 'call-edit');
    expect(edits.map((u) => u.status)).toEqual(['in_progress', 'completed']);
    expect(edits[1]!.content).toEqual([{ type: 'diff', path: ws.path('a.txt'), oldText: 'hello world\n', newText: 'bye world\n' }]);
    const bash = updatesOf(run, sessionId, 'tool_call_update').filter((u) => u.toolCallId === 'call-bash');
    expect(bash.at(-1)).toMatchObject({ status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'Permission denied by the user' } }] });
    expect(agentText(run, sessionId)).toBe('All done.');
    expect(text(resultsIn(server, 2)[0]!.content)).toContain('Permission denied by the user');
    expect(updatesOf(run, sessionId, 'available_commands_update')[0]!.availableCommands.map((c: { name: string }) => c.name)).toEqual(expect.arrayContaining(['compact', 'cost', 'plan', 'mcp']));
  });

  it('cancels a prompt mid-command: the prompt returns cancelled and no process of it is left', async () => {
    const marker = `acp-cancel-${process.pid}-${Date.now()}`;
    const { ws, env } = await prepare([callTool('bash', { command: `echo started; sleep 300 # ${marker}` }, 'call-sleep'), say('never')]);
    const { run } = await open(ws.dir, env, { permission: () => 'allow_once' });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    const prompt = run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'wait' }] });
    await expect.poll(() => updatesOf(run, sessionId, 'tool_call_update').some((u) => JSON.stringify(u.content ?? '').includes('started')), { timeout: 20_000 }).toBe(true);
    expect((await processesGone(marker, 1)).length).toBeGreaterThan(0);
    await run.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    expect(await processesGone(marker)).toEqual([]);
  });

  it('cancels a prompt mid-stream: the model request is dropped at once and the prompt returns cancelled', async () => {
    let streaming!: () => void;
    const started = new Promise<void>((resolve) => (streaming = resolve));
    const { ws, env, server } = await prepare([
      {
        ...say('a long answer that never ends'),
        beforeEvent: (ctx) => {
          if (ctx.event === 'content_block_delta') {
            streaming();
            return ctx.closed;
          }
        },
      },
    ]);
    const { run } = await open(ws.dir, env);
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    const prompt = run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'talk' }] });
    await started;
    await run.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    expect(await server.messageRequests()[0]!.finished).toBe('closed-early');
  });

  it('authenticates with a key keel login stored, and then opens sessions without ANTHROPIC_API_KEY', async () => {
    const { ws, env } = await prepare([say('stored key works')]);
    writeFileSync(path.join(ws.home, 'auth.json'), JSON.stringify({ apiKey: 'stored-key' }), { mode: 0o600 });
    const { run, init } = await open(ws.dir, { KEEL_HOME: env.KEEL_HOME!, ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL! });
    expect(init.protocolVersion).toBe(1);
    await expect(run.agent.request('authenticate', { methodId: 'anthropic-api-key' })).rejects.toMatchObject({ code: -32000, message: expect.stringContaining('ANTHROPIC_API_KEY is not set') });
    expect(await run.agent.request('authenticate', { methodId: 'keel-login' })).toEqual({});
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    expect(agentText(run, sessionId)).toBe('stored key works');
  });

  it('session/load replays the history as updates, and the next prompt carries it', async () => {
    const { ws, env, server } = await prepare([say('Noted: the code word is teal.'), say('It was teal.')]);
    let { run } = await open(ws.dir, env);
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'remember the code word teal' }] });
    expect(await run.close()).toBe(0);

    ({ run } = await open(ws.dir, env));
    const loaded = await run.agent.request('session/load', { sessionId, cwd: ws.dir, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe('ask');
    expect(updatesOf(run, sessionId, 'user_message_chunk').map((u) => u.content.text)).toEqual(['remember the code word teal']);
    expect(agentText(run, sessionId)).toBe('Noted: the code word is teal.');
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'what was it?' }] });
    const messages = server.messageRequests()[1]!.body.messages as Array<{ role: string; content: unknown }>;
    expect(text(messages[0]!.content)).toContain('remember the code word teal');
    expect(messages).toHaveLength(3);

    // Loading it again in the same process replays it again, now with the last exchange.
    const before = updatesOf(run, sessionId, 'user_message_chunk').length;
    await run.agent.request('session/load', { sessionId, cwd: ws.dir, mcpServers: [] });
    expect(updatesOf(run, sessionId, 'user_message_chunk').slice(before).map((u) => u.content.text)).toEqual(['remember the code word teal', 'what was it?']);

    await expect(run.agent.request('session/load', { sessionId: 'no-such-session', cwd: ws.dir, mcpServers: [] })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining('no session "no-such-session"'),
    });
  });

  it('reads and writes through the client when it offers fs: the unsaved buffer reaches the model, the edit lands in the buffer', async () => {
    const { ws, env, server } = await prepare([
      callTool('read_file', { path: 'notes.txt' }),
      callTool('edit_file', { path: 'notes.txt', old_string: 'unsaved', new_string: 'edited' }, 'call-edit'),
      say('ok'),
    ]);
    const file = ws.write('notes.txt', 'what the disk has\n');
    const buffers = new Map([[file, 'the unsaved buffer text\n']]);
    const { run } = await open(ws.dir, env, { buffers, permission: () => 'allow_always' });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'look' }] });
    expect(text(resultsIn(server, 1)[0]!.content)).toContain('the unsaved buffer text');
    expect(run.writes).toEqual([{ path: file, content: 'the edited buffer text\n' }]);
    expect(readFileSync(file, 'utf8')).toBe('what the disk has\n');
    const done = updatesOf(run, sessionId, 'tool_call_update').filter((u) => u.toolCallId === 'call-edit').at(-1)!;
    expect(done.content).toEqual([{ type: 'diff', path: file, oldText: 'the unsaved buffer text\n', newText: 'the edited buffer text\n' }]);
  });

  it('runs bash in a client terminal when the client offers terminals, and the tool call shows it', async () => {
    const { ws, env, server } = await prepare([callTool('bash', { command: 'echo in-a-terminal; cd sub && pwd' }, 'call-term'), callTool('bash', { command: 'pwd' }), say('ok')]);
    ws.write('sub/x', '');
    const { run } = await open(ws.dir, env, { terminals: true, permission: () => 'allow_always' });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run' }] });
    expect(run.terminalCommands.length).toBe(2);
    // "Always allow" answered the first bash call for the rest of the session.
    expect(run.permissions).toHaveLength(1);
    const first = text(resultsIn(server, 1)[0]!.content);
    expect(first).toContain('in-a-terminal');
    expect(first).not.toContain('__keel_cwd_');
    // The shell's directory carries over to the next call, as outside an editor.
    expect(text(resultsIn(server, 2)[0]!.content)).toContain(`${ws.dir}/sub`);
    const shown = updatesOf(run, sessionId, 'tool_call_update').filter((u) => u.toolCallId === 'call-term');
    expect(shown.some((u) => u.content?.[0]?.type === 'terminal' && u.content[0].terminalId === 'term-1')).toBe(true);
    expect(shown.at(-1)!.status).toBe('completed');
  });

  it("calls a tool of an MCP server the client passed in session/new", async () => {
    const { ws, env, server } = await prepare([
      callTool('tool_search', { query: 'select:mcp__everything__echo' }),
      callTool('mcp__everything__echo', { message: 'from the editor' }),
      say('echoed'),
    ]);
    const { run } = await open(ws.dir, env, { permission: () => 'allow_once' });
    const { sessionId } = await run.agent.request('session/new', {
      cwd: ws.dir,
      mcpServers: [{ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio', ws.dir], env: [] }],
    });
    expect((await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'echo' }] })).stopReason).toBe('end_turn');
    expect(text(resultsIn(server, 2)[0]!.content)).toContain('Echo: from the editor');
    // The server's prompts join the slash commands the editor offers as the server connects.
    const names = () => updatesOf(run, sessionId, 'available_commands_update').flatMap((u) => u.availableCommands.map((c: { name: string }) => c.name));
    await expect.poll(names, { timeout: 20_000 }).toContain('mcp__everything__simple-prompt');
  });

  it('serves two sessions in one process, each with its own history; one failing leaves the other working', async () => {
    const { ws, env, server } = await prepare([], {
      route: (request) => {
        const last = lastUserText(request);
        if (last.includes('fail')) return { status: 400, errorType: 'invalid_request_error', errorMessage: 'this prompt is refused' };
        return say(`answer to ${/session (\w+)/.exec(last)?.[1]} with ${(request.body.messages as unknown[]).length} messages`);
      },
    });
    const { run } = await open(ws.dir, env);
    const a = (await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] })).sessionId;
    const b = (await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] })).sessionId;
    expect(a).not.toBe(b);
    const [ra, rb] = await Promise.all([
      run.agent.request('session/prompt', { sessionId: a, prompt: [{ type: 'text', text: 'session alpha' }] }),
      run.agent.request('session/prompt', { sessionId: b, prompt: [{ type: 'text', text: 'session beta' }] }),
    ]);
    expect([ra.stopReason, rb.stopReason]).toEqual(['end_turn', 'end_turn']);
    expect(agentText(run, a)).toBe('answer to alpha with 1 messages');
    expect(agentText(run, b)).toBe('answer to beta with 1 messages');
    await expect(run.agent.request('session/prompt', { sessionId: b, prompt: [{ type: 'text', text: 'please fail' }] })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('this prompt is refused'),
    });
    await run.agent.request('session/prompt', { sessionId: a, prompt: [{ type: 'text', text: 'session alpha again' }] });
    expect(agentText(run, a)).toBe('answer to alpha with 1 messagesanswer to alpha with 3 messages');
    expect(server.messageRequests().length).toBeGreaterThanOrEqual(4);
  });

  it('takes text, resource links, embedded resources and images; streams thoughts, the plan and tool kinds', async () => {
    const { ws, env, server } = await prepare([
      {
        content: [
          { type: 'thinking', thinking: 'Let me plan this.', signature: 'sig' },
          { type: 'tool_use', id: 'call-todo', name: 'todo_write', input: { todos: [{ content: 'Read the spec', status: 'completed' }, { content: 'Write the code', status: 'in_progress' }] } },
        ],
      },
      say('Planned.'),
    ]);
    const { run } = await open(ws.dir, env);
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
    await run.agent.request('session/prompt', {
      sessionId,
      prompt: [
        { type: 'text', text: 'look at these' },
        { type: 'resource_link', uri: `file://${ws.path('spec.md')}`, name: 'spec.md' },
        { type: 'resource', resource: { uri: `file://${ws.path('open.ts')}`, mimeType: 'text/x-typescript', text: 'const unsaved = 1;' } },
        { type: 'image', mimeType: 'image/png', data: png },
      ],
    });
    const sent = server.messageRequests()[0]!.body.messages[0].content as Array<Record<string, any>>;
    expect(sent[0]).toEqual({ type: 'text', text: 'look at these' });
    expect(sent[1]!.text).toContain(ws.path('spec.md'));
    expect(sent[2]!.text).toBe(`<context ref="${ws.path('open.ts')}">\nconst unsaved = 1;\n</context>`);
    expect(sent[3]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } });
    expect(updatesOf(run, sessionId, 'agent_thought_chunk').map((u) => u.content.text).join('')).toBe('Let me plan this.');
    expect(updatesOf(run, sessionId, 'tool_call')[0]).toMatchObject({ toolCallId: 'call-todo', kind: 'think', title: 'Update the plan' });
    expect(updatesOf(run, sessionId, 'plan').at(-1)!.entries).toEqual([
      { content: 'Read the spec', priority: 'medium', status: 'completed' },
      { content: 'Write the code', priority: 'medium', status: 'in_progress' },
    ]);
  });

  it('answers each stop reason: max_tokens, max_turn_requests, refusal', async () => {
    const cut = await prepare([], { route: () => say('cut off', { stopReason: 'max_tokens' }) });
    let { run } = await open(cut.ws.dir, cut.env);
    let { sessionId } = await run.agent.request('session/new', { cwd: cut.ws.dir, mcpServers: [] });
    expect((await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'long' }] })).stopReason).toBe('max_tokens');

    const turns = await prepare([callTool('todo_write', { todos: [] }), callTool('todo_write', { todos: [] }), say('never')]);
    ({ run } = await open(turns.ws.dir, { ...turns.env, KEEL_MAX_TURNS: '1' }));
    ({ sessionId } = await run.agent.request('session/new', { cwd: turns.ws.dir, mcpServers: [] }));
    expect((await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'loop' }] })).stopReason).toBe('max_turn_requests');

    const refused = await prepare([say('I cannot help with that.', { stopReason: 'refusal' })]);
    ({ run } = await open(refused.ws.dir, refused.env));
    ({ sessionId } = await run.agent.request('session/new', { cwd: refused.ws.dir, mcpServers: [] }));
    expect((await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'bad' }] })).stopReason).toBe('refusal');
  });

  it('a cancel answers the outstanding permission request as cancelled, and the call never runs', async () => {
    const { ws, env } = await prepare([callTool('bash', { command: 'echo ran > d.txt' }, 'call-wait'), say('never')]);
    let asked!: () => void;
    const askedNow = new Promise<void>((resolve) => (asked = resolve));
    let cancelled = false;
    const { run } = await open(ws.dir, env, {
      permission: (_request, signal) =>
        new Promise((resolve) => {
          asked();
          signal.addEventListener('abort', () => {
            cancelled = true;
            resolve('cancel');
          });
        }),
    });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    const prompt = run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] });
    await askedNow;
    await run.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    expect(cancelled).toBe(true);
    expect(existsSync(ws.path('d.txt'))).toBe(false);
  });

  it('plan mode: the exit question goes to the client, and approving it switches to edits', async () => {
    const { ws, env } = await prepare([callTool('exit_plan_mode', { plan: '1. Rename the function' }, 'call-plan'), say('Carrying it out.')]);
    const { run } = await open(ws.dir, env, { permission: () => 'allow_once' });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/set_mode', { sessionId, modeId: 'plan' });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'plan it' }] });
    expect(run.permissions).toHaveLength(1);
    expect(run.permissions[0]!.options.map((o) => o.name)).toEqual(['Yes, carry it out (edits mode)', 'No, keep planning']);
    expect(JSON.stringify(run.permissions[0]!.toolCall.content)).toContain('1. Rename the function');
    expect(updatesOf(run, sessionId, 'current_mode_update').map((u) => u.currentModeId)).toEqual(['ask', 'plan', 'edits']);
  });

  it('runs a slash command given as the prompt, without calling the model', async () => {
    const { ws, env, server } = await prepare();
    const { run } = await open(ws.dir, env);
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    expect((await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/status' }] })).stopReason).toBe('end_turn');
    expect(agentText(run, sessionId)).toContain(sessionId);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it("asks ask_user_question's questions as permission requests whose options are the choices", async () => {
    const { ws, env, server } = await prepare([
      callTool('ask_user_question', {
        questions: [
          { question: 'Which database?', header: 'Database', options: [{ label: 'Postgres' }, { label: 'SQLite', description: 'a file' }] },
          { question: 'Add tests?', header: 'Tests', options: [{ label: 'Yes' }, { label: 'No' }] },
        ],
      }),
      say('ok'),
    ]);
    const { run } = await open(ws.dir, env, { permission: (req) => (req.toolCall.title === 'Which database?' ? '1' : 'skip') });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ask me' }] });
    expect(run.permissions.map((p) => p.options.map((o) => o.name))).toEqual([
      ['Postgres', 'SQLite', 'Skip this question'],
      ['Yes', 'No', 'Skip this question'],
    ]);
    const answer = text(resultsIn(server, 1)[0]!.content);
    expect(answer).toContain('Which database?\n→ SQLite');
    expect(answer).toContain('Add tests?\n→ (no answer)');
  });

  it('"Always allow" names what it grants: every call of the tool for the session, not just the command shown', async () => {
    const { ws, env } = await prepare([callTool('bash', { command: 'echo one > a.txt' }), callTool('bash', { command: 'echo two > b.txt' }), say('done')]);
    const { run } = await open(ws.dir, env, { permission: () => 'allow_always' });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write' }] });
    // One answer covered the second, different command: the label says so.
    expect(run.permissions).toHaveLength(1);
    expect(existsSync(ws.path('b.txt'))).toBe(true);
    expect(run.permissions[0]!.options.map((o) => o.name)).toEqual(['Allow once', 'Always allow every bash call (this session)', 'Reject', 'Always reject every bash call (this session)']);
  });

  it('"Always reject" refuses the tool for the rest of the session without asking again', async () => {
    const { ws, env, server } = await prepare([callTool('bash', { command: 'echo one > e.txt' }), callTool('bash', { command: 'echo two > e.txt' }), say('gave up')]);
    const { run } = await open(ws.dir, env, { permission: () => 'reject_always' });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write' }] });
    expect(run.permissions).toHaveLength(1);
    expect(existsSync(ws.path('e.txt'))).toBe(false);
    expect(resultsIn(server, 2)[0]!.is_error).toBe(true);
  });

  it('cancels a command running in a client terminal: the terminal is killed and the prompt returns cancelled', async () => {
    const marker = `acp-term-cancel-${process.pid}-${Date.now()}`;
    const { ws, env } = await prepare([callTool('bash', { command: `sleep 300 # ${marker}` }), say('never')]);
    const { run } = await open(ws.dir, env, { terminals: true, permission: () => 'allow_once' });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    const prompt = run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'wait' }] });
    await expect.poll(() => updatesOf(run, sessionId, 'tool_call_update').some((u) => u.content?.[0]?.type === 'terminal'), { timeout: 20_000 }).toBe(true);
    expect((await processesGone(marker, 1)).length).toBeGreaterThan(0);
    await run.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    expect(await processesGone(marker)).toEqual([]);
  });

  it('lists a call the policy refuses unasked, failed with the reason', async () => {
    const { ws, env } = await prepare([callTool('bash', { command: 'echo x > f.txt' }, 'call-refused'), say('ok')]);
    const { run } = await open(ws.dir, env, { permission: () => 'allow_once' });
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/set_mode', { sessionId, modeId: 'plan' });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] });
    expect(run.permissions).toEqual([]);
    expect(updatesOf(run, sessionId, 'tool_call')).toEqual([expect.objectContaining({ toolCallId: 'call-refused', kind: 'execute', status: 'pending' })]);
    const last = updatesOf(run, sessionId, 'tool_call_update').filter((u) => u.toolCallId === 'call-refused').at(-1)!;
    expect(last.status).toBe('failed');
    expect(last.content[0].content.text).toMatch(/plan/i);
    expect(existsSync(ws.path('f.txt'))).toBe(false);
  });

  it('changes the permission mode with session/set_mode, and says so in the updates', async () => {
    const { ws, env } = await prepare([callTool('bash', { command: 'echo auto > c.txt' }), say('ok')]);
    const { run } = await open(ws.dir, env);
    const { sessionId } = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    await run.agent.request('session/set_mode', { sessionId, modeId: 'auto' });
    await expect(run.agent.request('session/set_mode', { sessionId, modeId: 'yolo' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('unknown mode "yolo"') });
    await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] });
    expect(run.permissions).toEqual([]);
    expect(readFileSync(ws.path('c.txt'), 'utf8')).toBe('auto\n');
    expect(updatesOf(run, sessionId, 'current_mode_update').map((u) => u.currentModeId)).toContain('auto');
  });
});

/** A minimal ACP client written from the spec: newline-delimited JSON-RPC 2.0 over the child's stdio, no SDK. */
class RawClient {
  private buffer = '';
  private nextId = 0;
  readonly lines: unknown[] = [];
  readonly nonJson: string[] = [];
  private waiters = new Map<number, (message: Record<string, any>) => void>();
  readonly child;

  constructor(cwd: string, env: Record<string, string>) {
    this.child = spawn(KEEL_BIN, ['acp'], { cwd, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString();
      let at: number;
      while ((at = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + 1);
        let message: Record<string, any>;
        try {
          message = JSON.parse(line);
        } catch {
          this.nonJson.push(line);
          continue;
        }
        this.lines.push(message);
        if ('id' in message && ('result' in message || 'error' in message)) this.waiters.get(message.id)?.(message);
        else if ('id' in message && message.method === 'session/request_permission') this.write({ jsonrpc: '2.0', id: message.id, result: { outcome: { outcome: 'cancelled' } } });
      }
    });
  }

  write(message: unknown): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  writeRaw(text: string): void {
    this.child.stdin.write(text);
  }

  request(method: string, params: unknown): Promise<Record<string, any>> {
    const id = ++this.nextId;
    return new Promise((resolve) => {
      this.waiters.set(id, resolve);
      this.write({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Waits for a response with this id (for requests written raw). */
  response(id: number | null): Promise<Record<string, any>> {
    const found = this.lines.find((m) => (m as { id?: unknown }).id === id && !('method' in (m as object)));
    if (found) return Promise.resolve(found as Record<string, any>);
    return new Promise((resolve) => this.waiters.set(id as number, resolve));
  }

  updates(sessionId: string): Array<Record<string, any>> {
    return (this.lines as Array<Record<string, any>>).filter((m) => m.method === 'session/update' && m.params.sessionId === sessionId).map((m) => m.params.update);
  }

  async close(): Promise<number | null> {
    this.child.stdin.end();
    return new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }
}

describe('keel acp (a minimal client from the spec)', () => {
  const raws: RawClient[] = [];
  afterEach(async () => {
    for (const raw of raws.splice(0)) if (raw.child.exitCode === null) await raw.close();
  });

  it('initialize → session/new → session/prompt agrees with the SDK client', async () => {
    const { ws, env } = await prepare([say('Hello from Keel.'), say('Hello from Keel.')]);
    const raw = new RawClient(ws.dir, env);
    raws.push(raw);
    const init = await raw.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    expect(init.result.protocolVersion).toBe(1);
    const created = await raw.request('session/new', { cwd: ws.dir, mcpServers: [] });
    const sessionId = created.result.sessionId as string;
    const prompted = await raw.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    const rawText = raw.updates(sessionId).filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text).join('');
    expect(await raw.close()).toBe(0);
    expect(raw.nonJson).toEqual([]);

    const { run, init: sdkInit } = await open(ws.dir, env);
    const sdkSession = await run.agent.request('session/new', { cwd: ws.dir, mcpServers: [] });
    const sdkPrompt = await run.agent.request('session/prompt', { sessionId: sdkSession.sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    expect(init.result).toEqual(sdkInit);
    expect(created.result.modes).toEqual(sdkSession.modes);
    expect(prompted.result).toEqual(sdkPrompt);
    expect(rawText).toBe(agentText(run, sdkSession.sessionId));
    expect(rawText).toBe('Hello from Keel.');
  });

  it('keeps stdout for protocol messages: what a plugin prints goes to stderr', async () => {
    const { ws, env } = await prepare([say('quiet answer')]);
    writeFileSync(
      path.join(ws.home, 'agent.config.mjs'),
      "export default { plugins: [{ name: 'noisy', kernel: '^1.0.0', apply(k) { k.hooks.sessionStart.tapPromise('noisy', async () => { console.log('noise from a plugin'); process.stdout.write('more noise\\n'); }); } }] };\n",
    );
    const raw = new RawClient(ws.dir, env);
    raws.push(raw);
    let stderr = '';
    raw.child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await raw.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const created = await raw.request('session/new', { cwd: ws.dir, mcpServers: [] });
    const prompted = await raw.request('session/prompt', { sessionId: created.result.sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    expect(prompted.result).toEqual({ stopReason: 'end_turn' });
    expect(await raw.close()).toBe(0);
    expect(raw.nonJson).toEqual([]);
    expect(stderr).toContain('noise from a plugin');
    expect(stderr).toContain('more noise');
  });

  it("survives a plugin's stray errors thrown outside any request, and says so on stderr", async () => {
    const { ws, env } = await prepare([say('still here')]);
    writeFileSync(
      path.join(ws.home, 'agent.config.mjs'),
      "export default { plugins: [{ name: 'stray', kernel: '^1.0.0', apply(k) { k.hooks.sessionStart.tapPromise('stray', async () => { setTimeout(() => { throw new Error('stray timer'); }, 0); void Promise.reject(new Error('stray promise')); }); } }] };\n",
    );
    const raw = new RawClient(ws.dir, env);
    raws.push(raw);
    let stderr = '';
    raw.child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await raw.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const sessionId = (await raw.request('session/new', { cwd: ws.dir, mcpServers: [] })).result.sessionId;
    await expect.poll(() => stderr).toContain('stray timer');
    expect((await raw.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] })).result).toEqual({ stopReason: 'end_turn' });
    expect(stderr).toContain('keel: acp: an error outside any request (the sessions go on): stray promise');
    expect(await raw.close()).toBe(0);
  });

  it('refuses a second prompt while one runs, and accepts a key from the environment', async () => {
    const { ws, env } = await prepare([{ ...say('slow'), eventDelayMs: 200 }]);
    const raw = new RawClient(ws.dir, env);
    raws.push(raw);
    await raw.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    expect((await raw.request('authenticate', { methodId: 'anthropic-api-key' })).result).toEqual({});
    expect((await raw.request('authenticate', { methodId: 'oauth' })).error).toMatchObject({ code: -32602, message: expect.stringContaining('unknown auth method "oauth"') });
    const sessionId = (await raw.request('session/new', { cwd: ws.dir, mcpServers: [] })).result.sessionId;
    const first = raw.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'one' }] });
    const second = await raw.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'two' }] });
    expect(second.error).toMatchObject({ code: -32600, message: expect.stringContaining('a prompt is already running in this session') });
    expect((await first).result).toEqual({ stopReason: 'end_turn' });
  });

  it('answers malformed input, unknown methods and unknown sessions with JSON-RPC errors, and writes nothing else to stdout', async () => {
    const { ws, env } = await prepare();
    const raw = new RawClient(ws.dir, env);
    raws.push(raw);
    // A version Keel does not speak: it answers with the one it does, and the client decides.
    expect((await raw.request('initialize', { protocolVersion: 99, clientCapabilities: {} })).result.protocolVersion).toBe(1);
    raw.writeRaw('this is not json\n');
    expect((await raw.response(null)).error).toMatchObject({ code: -32700, message: expect.stringContaining('Parse error') });
    expect((await raw.request('session/frobnicate', {})).error).toMatchObject({ code: -32601, message: expect.stringContaining('session/frobnicate') });
    expect((await raw.request('session/prompt', { sessionId: 'nope', prompt: [{ type: 'text', text: 'x' }] })).error).toMatchObject({
      code: -32002,
      message: 'unknown session "nope" (open it with session/new or session/load first)',
    });
    expect((await raw.request('session/new', { cwd: 'relative/dir', mcpServers: [] })).error).toMatchObject({ code: -32602, message: expect.stringContaining('cwd: "relative/dir" is not an absolute path') });
    expect((await raw.request('session/new', { mcpServers: [] })).error).toMatchObject({ code: -32602 });
    const created = await raw.request('session/new', { cwd: ws.dir, mcpServers: [] });
    expect((await raw.request('session/prompt', { sessionId: created.result.sessionId, prompt: [{ type: 'audio', data: '', mimeType: 'audio/wav' }] })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('audio is not supported'),
    });
    expect(await raw.close()).toBe(0);
    expect(raw.nonJson).toEqual([]);
  });
});
