/**
 * The `sdk` and `subagent` frontends: Claude Code's stream-json protocol over stdin/stdout. `sdk` serves a
 * host process (many turns, control requests both ways); `subagent` serves a parent Keel's `agent` call
 * (one task, permission questions go up to the parent).
 */
import { definePlugin, type Kernel, type ModeContext } from '../../kernel/index.js';
import { driverOf, ProtocolDriver, type DriverOptions } from './driver.js';
import { readLines } from './lines.js';

export { ProtocolDriver, type DriverOptions, type Incoming, type AgentsService, type AgentDefinitionInput } from './driver.js';
export { readLines } from './lines.js';
export type { OutMessage } from './messages.js';

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

export default definePlugin(() => ({
  name: 'sdk',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.hooks.askUser.tapPromise('sdk', async (question, turn) => {
      if (question.kind !== 'permission') return undefined;
      return driverOf(turn.session)?.ask(question, turn);
    });

    kernel.modes.register({
      name: 'sdk',
      async run(ctx) {
        const stop = logToStderr(kernel, ctx);
        try {
          return await new ProtocolDriver({
            kernel,
            input: readLines(ctx.io.stdin),
            write: writer(ctx),
            startSession: (overrides) => ctx.startSession(overrides),
            signal: ctx.signal,
            maxTurns: ctx.options.maxTurns,
            askHost: ctx.options.permissionPromptTool === 'stdio',
            partial: Boolean(ctx.options.includePartialMessages),
            once: false,
            slashCommands: true,
          }).run();
        } finally {
          stop();
          release(ctx);
        }
      },
    });

    kernel.modes.register({
      name: 'subagent',
      async run(ctx) {
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
      },
    });
  },
}));
