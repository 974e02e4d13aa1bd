/** The `sdk` and `subagent` modes' code, loaded when one of them runs: the protocol driver over stdin/stdout. */
import type { Kernel, ModeContext } from '../../kernel/index.js';
import { ProtocolDriver, type DriverOptions } from './driver.js';
import { readLines } from './lines.js';

/** Protocol lines to stdout. A host whose reader died is treated as gone: the CLI aborts ctx.signal (the turn aborts,
 * tools end) and drops what is written after, then exits 141. */
function writer(ctx: ModeContext): DriverOptions['write'] {
  return (message) => {
    ctx.io.stdout.write(`${JSON.stringify(message)}\n`);
  };
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
    const code = await new ProtocolDriver({
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
    return code;
  } finally {
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
  try {
    const code = await new ProtocolDriver({
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
    return code;
  } finally {
    stop();
    release(ctx);
  }
}
