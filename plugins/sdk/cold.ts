/** The `sdk` and `subagent` modes' code, loaded when one of them runs: the protocol driver over stdin/stdout. */
import type { Kernel, ModeContext } from '../../kernel/index.js';
import { ProtocolDriver, type DriverOptions } from './driver.js';
import { readLines } from './lines.js';

function writer(ctx: ModeContext): DriverOptions['write'] {
  return (message) => ctx.io.stdout.write(`${JSON.stringify(message)}\n`);
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
  try {
    return await new ProtocolDriver({
      kernel,
      input: readLines(ctx.io.stdin),
      write: writer(ctx),
      startSession: (overrides) => ctx.startSession(overrides),
      signal: ctx.signal,
      maxTurns: ctx.options.maxTurns,
      askHost: ctx.options.flags?.['permission-prompt-tool'] === 'stdio',
      partial: Boolean(ctx.options.includePartialMessages),
      once: false,
      slashCommands: true,
    }).run();
  } finally {
    stop();
    release(ctx);
  }
}

/** Sub-agent mode: one task from a parent Keel; permission questions go up to it. */
export async function runSubagentMode(kernel: Kernel, ctx: ModeContext): Promise<number> {
  const stop = logToStderr(kernel, ctx);
  const parent = process.env.KEEL_PARENT_SESSION_ID;
  try {
    return await new ProtocolDriver({
      kernel,
      input: readLines(ctx.io.stdin),
      write: writer(ctx),
      startSession: (overrides) => ctx.startSession({ ...overrides, ...(parent ? { parentSessionId: parent } : {}) }),
      signal: ctx.signal,
      maxTurns: ctx.options.maxTurns,
      askHost: true,
      partial: Boolean(ctx.options.includePartialMessages),
      once: true,
      slashCommands: false,
    }).run();
  } finally {
    stop();
    release(ctx);
  }
}
