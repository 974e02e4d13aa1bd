/**
 * `keel acp`: the Agent Client Protocol over stdin/stdout, as newline-delimited JSON-RPC. Loaded only when it
 * runs. While it serves, stdout carries protocol messages only: anything else that writes to process.stdout goes
 * to stderr, where logs and warnings go too.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { errorMessage, type Io, type Kernel } from '../../kernel/index.js';
import { KeelAgent } from './agent.js';
import { ACP_MAX_MESSAGE_BYTES, describeLimit, lineLimit } from './line-limit.js';

/** 128 + SIGPIPE, what a shell reports for a program a closed pipe stopped (as `keel -p` and SDK mode exit). */
const READER_GONE_EXIT = 141;
/** How long the sessions get to stop once the connection closed. */
const CLOSE_GRACE_MS = 5000;

const USAGE = `Usage: keel acp

Serves the Agent Client Protocol on stdin/stdout, for an editor that starts Keel as its agent (Zed, JetBrains
IDEs, Neovim and Emacs plugins). Configure Keel as usual: agent.config.ts, or ANTHROPIC_API_KEY, KEEL_MODEL and
KEEL_PERMISSION_MODE in the environment the editor gives it; the editor passes each session's folder and MCP
servers. See the README, "Editors".
`;

/** Keel's version from its package.json (dist/bin/keel.cjs and plugins/acp/ are both two folders below it). */
function keelVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!existsSync(file)) continue;
    try {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'keel' && pkg.version) return pkg.version;
    } catch {
      // not ours
    }
  }
  return '0.0.0';
}

export async function runAcpCommand(args: string[], ctx: { kernel: Kernel; io: Io; env: NodeJS.ProcessEnv }): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    ctx.io.stdout.write(USAGE);
    return 0;
  }
  if (args.length > 0) {
    ctx.io.stderr.write(`keel: acp: unexpected argument "${args[0]}" (keel acp takes none; configure Keel in agent.config.ts)\n`);
    return 2;
  }
  // An editor stops its agent with a signal: the sessions end as on a closed connection (their tools are killed
  // rather than left running), and Keel exits as a shell reports it (128 + the signal's number). A second signal
  // leaves at once.
  const controller = new AbortController();
  let signalled: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled !== undefined) process.exit(signalled);
    signalled = 128 + SIGNAL_NUMBERS[signal as keyof typeof SIGNAL_NUMBERS];
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  const signals = Object.keys(SIGNAL_NUMBERS) as NodeJS.Signals[];
  for (const signal of signals) process.on(signal, onSignal);
  try {
    const code = await runAcp(ctx.kernel, ctx.io, controller.signal, ctx.env);
    return signalled ?? code;
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
  }
}

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;

export async function runAcp(kernel: Kernel, io: Io, signal: AbortSignal, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (io.stdin.isTTY) io.stderr.write('keel acp: serving the Agent Client Protocol on stdin/stdout; an editor starts it (README, "Editors"). Ctrl+D ends it.\n');
  const stdout = io.stdout;
  const protocolWrite = stdout.write.bind(stdout) as (chunk: Uint8Array, cb: (err?: Error | null) => void) => boolean;
  // From here on, only the protocol stream writes to the real stdout.
  const originalWrite = process.stdout.write;
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  // The editor no longer reading stdout (it crashed, or closed its end of the pipe) ends the connection like a
  // closed stdin: the sessions stop and their tools are killed, and Keel exits 141 (128 + SIGPIPE) saying why. The
  // SDK drops failed writes, so the failure is caught here, on the stream itself.
  const agent = new KeelAgent(kernel, env, keelVersion());
  let readerGone: string | undefined;
  let closeConnection: (reason: Error) => void = () => undefined;
  const onReaderGone = (err: NodeJS.ErrnoException) => {
    if (readerGone) return;
    readerGone = err.code ?? err.message;
    agent.disconnect();
    closeConnection(new Error(`the editor stopped reading stdout (${readerGone})`));
  };
  stdout.on('error', onReaderGone);
  // An editor that closed Keel's stderr (its agent log) loses the log, nothing else: a failed write there is not an
  // error to report (on stderr, which would fail again, over and over).
  const stderrGone = () => undefined;
  io.stderr.on('error', stderrGone);
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (readerGone) return callback();
      protocolWrite(chunk, (err) => {
        if (err) onReaderGone(err);
        callback();
      });
    },
  });
  // One process serves every session: an error thrown outside any request (a plugin's stray timer or promise) is
  // logged, not allowed to end the others' work.
  const stray = (err: unknown) => io.stderr.write(`keel: acp: an error outside any request (the sessions go on): ${errorMessage(err)}\n`);
  process.on('uncaughtException', stray);
  process.on('unhandledRejection', stray);
  // A line longer than the cap ends the connection: the client hears why (there is no request id to answer, so
  // `id: null`), the log says so, and Keel exits 1 without having acted on any of it.
  let overflowed = false;
  const limit = describeLimit(ACP_MAX_MESSAGE_BYTES);
  const input = (Readable.toWeb(io.stdin as Readable) as ReadableStream<Uint8Array>).pipeThrough(
    lineLimit(ACP_MAX_MESSAGE_BYTES, () => {
      overflowed = true;
      const message = `a message is longer than ${limit}, the limit for one line of the protocol; the connection is closed`;
      protocolWrite(Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: ${message}` } })}\n`), () => undefined);
      io.stderr.write(`keel: acp: ${message}\n`);
    }),
  );
  // The SDK's own cap is the same, so it never buffers more than the guard lets through.
  const stream = ndJsonStream(Writable.toWeb(output) as WritableStream<Uint8Array>, input, { maxMessageBytes: ACP_MAX_MESSAGE_BYTES });
  const connection = agent.app().connect(stream);
  closeConnection = (reason) => connection.close(reason);
  const onAbort = () => connection.close(new Error('interrupted'));
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await connection.closed;
    return overflowed ? 1 : readerGone ? READER_GONE_EXIT : 0;
  } catch (err) {
    if (overflowed || readerGone) return overflowed ? 1 : READER_GONE_EXIT;
    io.stderr.write(`keel: acp: the connection failed: ${errorMessage(err)}\n`);
    return 1;
  } finally {
    signal.removeEventListener('abort', onAbort);
    // A turn that ignores its abort (a plugin's tool or hook that never settles) must not keep Keel running for an
    // editor that is gone: the sessions get a few seconds to stop, then Keel leaves (its exit ends their processes).
    let grace: NodeJS.Timeout | undefined;
    const stuck = await Promise.race([
      agent.closeAll().then(() => false),
      new Promise<boolean>((resolve) => (grace = setTimeout(() => resolve(true), CLOSE_GRACE_MS))),
    ]);
    clearTimeout(grace);
    if (stuck) io.stderr.write(`keel: acp: a session did not stop within ${CLOSE_GRACE_MS / 1000} s of the connection closing (a tool or plugin ignores cancellation); Keel leaves without it\n`);
    // The listener stays: a write still in flight may fail after this, and must not become an uncaught error.
    if (readerGone) io.stderr.write(`keel: acp: the editor stopped reading stdout (${readerGone}): every session was stopped and its tools ended\n`);
    process.off('uncaughtException', stray);
    process.off('unhandledRejection', stray);
    process.stdout.write = originalWrite;
    // The editor closed the connection: whatever a plugin left running (a timer, a socket) must not keep Keel alive.
    setTimeout(() => process.exit(), 2000).unref();
  }
}
