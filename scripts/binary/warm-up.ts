/**
 * Runs the common path once while the start-up snapshot is built: a real `keel -p` through the CLI, the default
 * preset, the provider, its transport, the tools, the print mode and the session store. V8 keeps the bytecode of
 * every function that has run in the snapshot, and compiles the others lazily on first call: without this, a
 * restored Keel would still compile most of what a run needs (measured: building a zod schema took 6–8 ms restored
 * cold, 1 ms warmed). Hooks compiled here serve every later kernel of the same shape (kernel/hooks.ts).
 *
 * Only the socket is a stand-in: node:http cannot load while a snapshot is built, so `requestSender` answers each
 * request from a canned event stream, as a server's response would arrive. No `bash` call: spawning at build time
 * would put child-process state into the snapshot.
 *
 * Everything here is self-contained and leaves no state a later run reads: temporary folders (removed), its own
 * `$KEEL_HOME`, a session closed at the end of the run (tests/e2e/snapshot.test.ts checks no listener is left).
 */
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../cli/main.js';
import type { Io } from '../../kernel/index.js';
import { requestSender } from '../../plugins/query-anthropic/transport.js';

type Event = [string, Record<string, unknown>];
const sse = (events: Event[]) => events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join('');
const messageStart: Event = ['message_start', { type: 'message_start', message: { id: 'msg_warm', type: 'message', role: 'assistant', model: 'warm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } }];
const messageEnd = (stop: string): Event[] => [
  ['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 2 } }],
  ['message_stop', { type: 'message_stop' }],
];
const text = (index: number, value: string): Event[] => [
  ['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: value } }],
  ['content_block_stop', { type: 'content_block_stop', index }],
];
const toolUse = (index: number, name: string, input: Record<string, unknown>): Event[] => [
  ['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_warm${index}`, name, input: {} } }],
  ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } }],
  ['content_block_stop', { type: 'content_block_stop', index }],
];

/** The model's side of the run: file tools, the edit tools, a shell command, then the answer. */
const ANSWERS = [
  [messageStart, ...text(0, 'Looking.'), ...toolUse(1, 'read_file', { path: 'a.txt' }), ...toolUse(2, 'ls', {}), ...toolUse(3, 'glob', { pattern: '*.txt' }), ...messageEnd('tool_use')],
  [messageStart, ...toolUse(0, 'edit_file', { path: 'a.txt', old_string: 'warm', new_string: 'warmer' }), ...toolUse(1, 'write_file', { path: 'b.txt', content: 'b\n' }), ...messageEnd('tool_use')],
  // The shell policy's analysis of a command, which asks here (the run's own $KEEL_HOME is protected) and so is
  // denied without running anything: nothing is spawned at build time.
  [messageStart, ...toolUse(0, 'bash', { command: 'cat a.txt ../home/auth.json' }), ...messageEnd('tool_use')],
  [messageStart, ...text(0, 'warm'), ...messageEnd('end_turn')],
];

export async function warmUp(): Promise<void> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'keel-snapshot-')));
  const home = path.join(dir, 'home');
  const project = path.join(dir, 'project');
  mkdirSync(path.join(project, '.git'), { recursive: true });
  writeFileSync(path.join(project, 'a.txt'), 'warm\n');
  const answers = ANSWERS.map(sse);
  const bodies: string[] = [];
  const send = requestSender.send;
  requestSender.send = () => cannedExchange(answers.shift() ?? sse(ANSWERS[ANSWERS.length - 1]!), bodies) as unknown as ReturnType<typeof send>;
  const cwd = process.cwd();
  process.chdir(project);
  try {
    const code = await main(['-p', 'warm', '--permission-mode', 'auto'], silentIo(), { KEEL_HOME: home, HOME: home, ANTHROPIC_API_KEY: 'snapshot', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
    if (code !== 0) throw new Error(`keel -p exited ${code}`);
    if (answers.length) throw new Error(`the run made ${ANSWERS.length - answers.length} of ${ANSWERS.length} requests`);
    if (!bodies.at(-1)?.includes('Permission denied: bash')) throw new Error('the warm-up’s bash call was not denied: it must never run a command');
  } finally {
    requestSender.send = send;
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Output goes nowhere; stdin is a terminal, so the run reads no prompt from it (the builder's own is never read). */
function silentIo(): Io {
  const sink = { write: () => true, isTTY: false, columns: 80, on: () => sink, once: () => sink, removeListener: () => sink };
  return { stdout: sink, stderr: sink, stdin: { ...sink, isTTY: true } } as unknown as Io;
}

/** What node:http's request and response are to the transport: the request's writes, then a 200 event stream. */
function cannedExchange(answer: string, bodies: string[]): EventEmitter {
  let body = '';
  const request = Object.assign(new EventEmitter(), {
    write: (chunk: Buffer) => ((body += chunk.toString()), true),
    destroy: () => undefined,
    end: () => (bodies.push(body), setImmediate(respond)),
  });
  const respond = () => {
    const headers = { 'content-type': 'text/event-stream', 'request-id': 'req_warm' };
    const response = Object.assign(new EventEmitter(), { statusCode: 200, statusMessage: 'OK', headers, rawHeaders: Object.entries(headers).flat(), complete: true, resume: () => undefined, destroy: () => undefined });
    request.emit('response', response);
    response.emit('data', Buffer.from(answer));
    response.emit('end');
    response.emit('close');
  };
  return request;
}
