/**
 * Runs the common paths once while the start-up snapshot is built. V8 keeps the bytecode of every function that has
 * run in the snapshot, and compiles the others lazily on first call: without this, a restored Keel would still
 * compile most of what a run needs (measured: building a zod schema took 6–8 ms restored cold, 1 ms warmed).
 *
 * Everything here is self-contained and leaves no state a later run reads: temporary folders (removed), a
 * throwaway kernel with a scripted model, an SDK client whose fetch answers a canned stream; no network, no real
 * `$KEEL_HOME`, no files outside the temporary folder.
 */
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../kernel/cli.js';
import { toApiTool, type Io } from '../../kernel/index.js';
import { FetchHeaders } from '../../plugins/query-anthropic/headers.js';
import { ResponseBody } from '../../plugins/query-anthropic/response-body.js';
import { streamAttempt } from '../../plugins/query-anthropic/stream.js';
import { requestSender, StreamResponse } from '../../plugins/query-anthropic/transport.js';
import { testAgent } from '../../testing/index.js';

export async function warmUp(): Promise<void> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'keel-snapshot-')));
  try {
    await warmCli(dir);
    await warmTurn();
    await warmSdk();
    await warmPrint(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const silent = (): Io => {
  const sink = { write: () => true, isTTY: false, columns: 80, on: () => sink, once: () => sink, removeListener: () => sink };
  return { stdout: sink, stderr: sink, stdin: sink } as unknown as Io;
};

/** Flags, config layers, the default preset's plugins applied and sealed: `keel describe` in an empty folder. */
async function warmCli(dir: string): Promise<void> {
  const home = path.join(dir, 'home');
  const project = path.join(dir, 'project');
  mkdirSync(project);
  const cwd = process.cwd();
  process.chdir(project);
  try {
    const code = await main(['describe'], silent(), { KEEL_HOME: home, HOME: home, ANTHROPIC_API_KEY: 'snapshot' });
    if (code !== 0) throw new Error(`keel describe exited ${code}`);
  } finally {
    process.chdir(cwd);
  }
}

/**
 * A turn of the default preset with file tool calls: the loop, context hooks, permissions, the tools, the session
 * log. No `bash`: spawning at build time would put child-process state into the snapshot.
 */
async function warmTurn(): Promise<void> {
  const agent = await testAgent({
    preset: 'default',
    permissionMode: 'auto',
    script: [
      { tools: [{ name: 'read_file', input: { path: 'a.txt' } }, { name: 'ls', input: {} }, { name: 'glob', input: { pattern: '*.txt' } }] },
      { tools: [{ name: 'edit_file', input: { path: 'a.txt', old_string: 'warm', new_string: 'warmer' } }, { name: 'write_file', input: { path: 'b.txt', content: 'b\n' } }] },
      'done',
    ],
  });
  try {
    writeFileSync(path.join(agent.dir, 'a.txt'), 'warm\n');
    for (const tool of agent.kernel.tools.list()) toApiTool(tool);
    await agent.run('warm up');
  } finally {
    await agent.close();
  }
}

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

/**
 * A real one-turn `keel -p` with a tool call, through the CLI, the default preset, the provider and its transport,
 * the print mode and the session store. Only the socket is a stand-in: node:http cannot load while a snapshot is
 * built, so `requestSender` answers from canned event streams, in order, as a server's response would arrive.
 */
async function warmPrint(dir: string): Promise<void> {
  const home = path.join(dir, 'print-home');
  const project = path.join(dir, 'print-project');
  mkdirSync(path.join(project, '.git'), { recursive: true });
  writeFileSync(path.join(project, 'a.txt'), 'warm\n');
  const answers = [
    sse([messageStart, ...text(0, 'Reading.'), ...toolUse(1, 'read_file', { path: 'a.txt' }), ...messageEnd('tool_use')]),
    sse([messageStart, ...text(0, 'warm'), ...messageEnd('end_turn')]),
  ];
  const send = requestSender.send;
  requestSender.send = () => {
    const answer = answers.shift() ?? sse([messageStart, ...text(0, 'done'), ...messageEnd('end_turn')]);
    const request = Object.assign(new EventEmitter(), { write: () => true, destroy: () => undefined, end: () => setImmediate(respond) });
    const respond = () => {
      const headers = { 'content-type': 'text/event-stream', 'request-id': 'req_warm' };
      const response = Object.assign(new EventEmitter(), { statusCode: 200, statusMessage: 'OK', headers, rawHeaders: Object.entries(headers).flat(), complete: true, resume: () => undefined, destroy: () => undefined });
      request.emit('response', response);
      response.emit('data', Buffer.from(answer));
      response.emit('end');
      response.emit('close');
    };
    return request as unknown as ReturnType<typeof send>;
  };
  const cwd = process.cwd();
  process.chdir(project);
  try {
    const io = silent();
    // A terminal on stdin: the run reads no prompt from it (the builder's own stdin is never touched).
    (io.stdin as { isTTY?: boolean }).isTTY = true;
    const code = await main(['-p', 'warm', '--permission-mode', 'auto'], io, { KEEL_HOME: home, HOME: home, ANTHROPIC_API_KEY: 'snapshot', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
    if (code !== 0) throw new Error(`keel -p exited ${code}`);
  } finally {
    requestSender.send = send;
    process.chdir(cwd);
  }
}

const SSE = [
  ['message_start', { type: 'message_start', message: { id: 'msg_warm', type: 'message', role: 'assistant', model: 'warm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_warm', name: 'ls', input: {} } }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path":"."}' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 2 } }],
  ['message_stop', { type: 'message_stop' }],
]
  .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  .join('');

/**
 * The provider's streamed attempt as a request runs it (plugins/query-anthropic/stream.ts: the SDK's request building,
 * its event stream, Keel's accumulation), over a fetch that answers a canned event stream.
 */
async function warmSdk(): Promise<void> {
  const { MessagesClient } = await import('../../plugins/query-anthropic/client.js');
  const fetch = async (input: string | URL | Request): Promise<Response> => {
    // The body the transport gives the SDK (a web ReadableStream could not be here: async iteration of one leaves
    // state Node cannot put into a snapshot).
    const body = new ResponseBody();
    body.push(new TextEncoder().encode(SSE));
    body.end();
    const headers = new FetchHeaders({ 'content-type': 'text/event-stream', 'request-id': 'req_warm' });
    return new StreamResponse(body, { status: 200, statusText: 'OK', headers, url: String(input) }) as unknown as Response;
  };
  // Without OpenTelemetry, as the plugin makes its client (its context manager cannot go into a snapshot).
  const client = new MessagesClient({ apiKey: 'snapshot', baseURL: 'http://127.0.0.1:9', maxRetries: 0, fetch, openTelemetry: false });
  const params = { model: 'warm', max_tokens: 16, stream: true as const, system: [{ type: 'text' as const, text: 'warm' }], messages: [{ role: 'user' as const, content: 'warm' }] };
  await streamAttempt(client, params, { signal: new AbortController().signal, alive: () => undefined, progress: () => undefined }, { visible: true, emit: () => undefined });
}
