/** `keel acp` as a real child process, driven by the ACP SDK's client (`ClientApp`) over its stdio. */
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import {
  client,
  ndJsonStream,
  type ClientCapabilities,
  type ClientContext,
  type RequestPermissionRequest,
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import { cleanEnv, KEEL_BIN } from './cli.js';

export interface AcpClientOptions {
  /** The option the client picks for each permission request (by kind), or `cancel`. */
  permission?: (request: RequestPermissionRequest, signal: AbortSignal) => string | 'cancel' | Promise<string | 'cancel'>;
  /** Offer fs reads and writes; the map is the editor's buffers (path → text), written back on writes. */
  buffers?: Map<string, string>;
  /** Offer terminals: the test's client runs each command as its own child process. */
  terminals?: boolean;
}

export interface AcpRun {
  child: ChildProcess;
  agent: ClientContext;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  writes: Array<{ path: string; content: string }>;
  terminalCommands: string[];
  stdout: () => string;
  stderr: () => string;
  /** Closes stdin and waits for the process to exit. */
  close(): Promise<number | null>;
}

export function startAcp(cwd: string, env: Record<string, string>, opts: AcpClientOptions = {}): AcpRun {
  const child = spawn(KEEL_BIN, ['acp'], { cwd, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const writes: Array<{ path: string; content: string }> = [];
  const terminalCommands: string[] = [];
  const terms = new Map<string, { child: ChildProcess; output: string; exit: Promise<{ exitCode: number | null; signal: string | null }> }>();
  let nextTerminal = 0;
  const app = client({ name: 'keel-test-client' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
    })
    .onRequest('session/request_permission', async ({ params, signal }) => {
      permissions.push(params);
      const choice = (await opts.permission?.(params, signal)) ?? 'cancel';
      if (choice === 'cancel') return { outcome: { outcome: 'cancelled' } };
      const option = params.options.find((o) => o.kind === choice || o.optionId === choice);
      return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
    })
    .onRequest('fs/read_text_file', ({ params }) => {
      const text = opts.buffers?.get(params.path);
      if (text === undefined) throw new Error(`${params.path}: not found`);
      return { content: text };
    })
    .onRequest('fs/write_text_file', ({ params }) => {
      writes.push({ path: params.path, content: params.content });
      opts.buffers?.set(params.path, params.content);
      return {};
    })
    .onRequest('terminal/create', ({ params }) => {
      terminalCommands.push([params.command, ...(params.args ?? [])].join(' '));
      const proc = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? cwd, env: { ...process.env, ...Object.fromEntries((params.env ?? []).map((e) => [e.name, e.value])) }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const id = `term-${++nextTerminal}`;
      const term = { child: proc, output: '', exit: new Promise<{ exitCode: number | null; signal: string | null }>((resolve) => proc.on('close', (exitCode, signal) => resolve({ exitCode, signal }))) };
      proc.stdout!.on('data', (d: Buffer) => (term.output += d.toString()));
      proc.stderr!.on('data', (d: Buffer) => (term.output += d.toString()));
      terms.set(id, term);
      return { terminalId: id };
    })
    .onRequest('terminal/output', async ({ params }) => {
      const term = terms.get(params.terminalId)!;
      const done = term.child.exitCode !== null || term.child.signalCode !== null;
      return { output: term.output, truncated: false, ...(done ? { exitStatus: await term.exit } : {}) };
    })
    .onRequest('terminal/wait_for_exit', async ({ params }) => terms.get(params.terminalId)!.exit)
    .onRequest('terminal/kill', ({ params }) => {
      const term = terms.get(params.terminalId)!;
      try {
        process.kill(-term.child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
      return {};
    })
    .onRequest('terminal/release', ({ params }) => {
      terms.delete(params.terminalId);
      return {};
    });
  const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
  const connection = app.connect(stream);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    agent: connection.agent,
    updates,
    permissions,
    writes,
    terminalCommands,
    stdout: () => stdout,
    stderr: () => stderr,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      for (const term of terms.values()) term.child.kill('SIGKILL');
      return code;
    },
  };
}

/** Client capabilities for `initialize`. */
export function capabilities(opts: AcpClientOptions): ClientCapabilities {
  return { fs: { readTextFile: Boolean(opts.buffers), writeTextFile: Boolean(opts.buffers) }, terminal: Boolean(opts.terminals) };
}

/** The updates of one session, by kind. */
export function updatesOf(run: AcpRun, sessionId: string, kind?: string) {
  return run.updates.filter((n) => n.sessionId === sessionId && (!kind || n.update.sessionUpdate === kind)).map((n) => n.update as Record<string, any>);
}

/** The text an agent streamed in a session's message chunks. */
export function agentText(run: AcpRun, sessionId: string): string {
  return updatesOf(run, sessionId, 'agent_message_chunk')
    .map((u) => (u.content?.type === 'text' ? u.content.text : ''))
    .join('');
}
