/** The `sdk` and `subagent` modes' code, loaded when one of them runs: the protocol driver over stdin/stdout. */
import type { Kernel, ModeContext } from '../../kernel/index.js';
import { ProtocolDriver, type DriverOptions } from './driver.js';
import { readLines } from './lines.js';
import { READER_GONE_EXIT, watchReader, type ReaderWatch } from './reader.js';

function writer(ctx: ModeContext, reader: ReaderWatch): DriverOptions['write'] {
  return (message) => {
    if (!reader.gone) ctx.io.stdout.write(`${JSON.stringify(message)}\n`);
  };
}

/** The driver's exit code, or READER_GONE_EXIT with its line on stderr when the reader of stdout went away. */
async function exitCode(ctx: ModeContext, reader: ReaderWatch, code: number): Promise<number> {
  await reader.flushed();
  if (!reader.gone) return code;
  ctx.io.stderr.write(reader.line());
  return READER_GONE_EXIT;
}

/** Stops reading stdin once the session is over, so an open pipe does not keep the process alive. */
function release(ctx: ModeContext): void {
  (ctx.io.stdin as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
}

function logToStderr(kernel: Kernel, ctx: ModeContext): () => void {
  return kernel.observe((event) => {
    if (event.type === 'log' && (event.level === 'warn' || event.level === 'error')) ctx.io.stderr.write(`keel: ${event.level}: ${event.message}\n`);
  });
}

/** SDK mode: a host process, many turns, control requests both ways. */
export async function runSdkMode(kernel: Kernel, ctx: ModeContext): Promise<number> {
  const stop = logToStderr(kernel, ctx);
  // A host whose reader died is treated as gone: the turn aborts, tools end, reading stops.
  const reader = watchReader(ctx.io.stdout, ctx.io.stderr, ctx.signal);
  try {
    const code = await new ProtocolDriver({
      kernel,
      input: readLines(ctx.io.stdin),
      write: writer(ctx, reader),
      startSession: (overrides) => ctx.startSession(overrides),
      signal: reader.signal,
      maxTurns: ctx.options.maxTurns,
      askHost: ctx.options.flags?.['permission-prompt-tool'] === 'stdio',
      partial: Boolean(ctx.options.includePartialMessages),
      once: false,
      slashCommands: true,
    }).run();
    return await exitCode(ctx, reader, code);
  } finally {
    reader.dispose();
    stop();
    release(ctx);
  }
}

/**
 * Sub-agent mode: one task from a parent Keel; permission questions go up to it. It runs only under the policy its
 * parent handed over (the `subagent-policy` service, from tool-agent), and not at all when it would be looser.
 */
export async function runSubagentMode(kernel: Kernel, ctx: ModeContext): Promise<number> {
  const policy = kernel.services.get('subagent-policy') as { check(): Promise<string | undefined> } | undefined;
  const problem = policy ? await policy.check() : "no plugin takes the parent's policy (tool-agent is not in this preset)";
  if (problem) {
    ctx.io.stderr.write(`keel: sub-agent refused to start: ${problem}\n`);
    release(ctx);
    return 2;
  }
  const stop = logToStderr(kernel, ctx);
  const parent = process.env.KEEL_PARENT_SESSION_ID;
  const reader = watchReader(ctx.io.stdout, ctx.io.stderr, ctx.signal);
  try {
    const code = await new ProtocolDriver({
      kernel,
      input: readLines(ctx.io.stdin),
      write: writer(ctx, reader),
      startSession: (overrides) => ctx.startSession({ ...overrides, ...(parent ? { parentSessionId: parent } : {}) }),
      signal: reader.signal,
      maxTurns: ctx.options.maxTurns,
      askHost: true,
      partial: Boolean(ctx.options.includePartialMessages),
      once: true,
      slashCommands: false,
    }).run();
    return await exitCode(ctx, reader, code);
  } finally {
    reader.dispose();
    stop();
    release(ctx);
  }
}
