import {
  definePlugin,
  findSlashCommand,
  protocol,
  runAgent,
  runSlashCommand,
  type AgentEvent,
  type Kernel,
  type ModeContext,
  type RunResult,
  type Session,
  visibleControls,
} from '../../kernel/index.js';
import { helpText } from './help.js';
import { refuseUnknownCommand } from './unknown-command.js';

/** The headless and pipe frontend: `--output-format text | json | stream-json`. */
export default definePlugin(() => ({
  name: 'print',
  kernel: '^1.0.0',
  apply(kernel) {
    // An interactive frontend may offer its own /help; the headless one lists the registry as text.
    if (!kernel.commands.get('help')) {
      kernel.commands.register({
        name: 'help',
        description: 'list the slash commands and the main flags',
        run: async (_args, ctx) => helpText(ctx.kernel.commands.list()),
      });
    }
    kernel.modes.register({
      name: 'print',
      async run(ctx) {
        // A reader of stdout that went away aborts ctx.signal and silences ctx.io.stdout (the CLI watches it).
        const signal = ctx.signal;
        const write = (value: unknown) => {
          ctx.io.stdout.write(`${JSON.stringify(value)}\n`);
        };
        // Listen before the session starts, so warnings from sessionStart (resume repairs) reach stderr.
        let session: Session | undefined;
        const partial = ctx.options.includePartialMessages && ctx.options.outputFormat === 'stream-json' ? new protocol.PartialStream(() => session) : undefined;
        const stop = kernel.observe((event) => {
          if (partial && session) for (const line of partial.lines(event)) write(line);
          onEvent(ctx, session, event, write);
        });
        try {
          session = await ctx.startSession();
          if (ctx.options.outputFormat === 'stream-json') write(protocol.initMessage(kernel, session));
          const slash = await findSlashCommand(kernel, ctx.prompt ?? '');
          if (!slash) refuseUnknownCommand(kernel, ctx.prompt ?? '');
          const result = slash
            ? await runSlashCommand(kernel, session, slash, signal)
            : await runAgent(kernel, session, ctx.prompt ?? '', { signal, maxTurns: ctx.options.maxTurns });
          return slash ? reportSlash(kernel, ctx, session, result, write) : report(kernel, ctx, session, result, write);
        } finally {
          stop();
          // The run is over: its session file is synced as needed and closed, and its lock released, now rather
          // than when the process exits (an embedder may run main() again in the same process).
          if (session) (kernel.services.get('session-store') as { close(session: Session): void } | undefined)?.close(session);
        }
      },
    });
  },
}));

function onEvent(ctx: ModeContext, session: Session | undefined, event: AgentEvent, write: (value: unknown) => void): void {
  if (event.type === 'log' && (event.level === 'warn' || event.level === 'error')) {
    ctx.io.stderr.write(`keel: ${event.level}: ${event.message}\n`);
    return;
  }
  // A person watching a terminal sees each wait; scripts reading stderr keep their one-line errors.
  if (event.type === 'retry' && ctx.options.outputFormat === 'text' && ctx.io.stderr.isTTY) {
    ctx.io.stderr.write(`keel: ${visibleControls(retryLine(event.attempt, event.maxRetries, event.delayMs, event.cause))}\n`);
    return;
  }
  if (ctx.options.outputFormat !== 'stream-json' || !session) return;
  const line = protocol.eventMessage(session, event);
  if (line) write(line);
}

/** "Retrying in 2 s… (2/3): overloaded (529)" — what a person watching a headless run needs to see. */
export function retryLine(attempt: number, maxRetries: number, delayMs: number, cause: string): string {
  const wait = delayMs >= 1000 ? `${(delayMs / 1000).toFixed(delayMs % 1000 === 0 ? 0 : 1)} s` : `${delayMs} ms`;
  return `Retrying in ${wait}… (${attempt}/${maxRetries}): ${cause}`;
}

/** Reports a slash command run against the session (`keel -p "/cost" --continue`) like a run. */
function reportSlash(kernel: Kernel, ctx: ModeContext, session: Session, result: RunResult, write: (value: unknown) => void): number {
  // A command that printed nothing prints nothing (a run's empty answer is still one line).
  if (ctx.options.outputFormat === 'text' && !result.isError && !result.result) return 0;
  return report(kernel, ctx, session, result, write);
}

/** The usage service's per-model totals, when the usage plugin is loaded. */
function modelUsageOf(kernel: Kernel): Record<string, unknown> {
  const usage = kernel.services.get('usage') as { modelUsage?: () => Record<string, unknown> } | undefined;
  return usage?.modelUsage?.() ?? {};
}

/**
 * Text for `stream`: on a terminal, the model's (or a server's) escape sequences and control characters are shown
 * in caret notation (`^[]52;…`), never obeyed, so a prompt-injected answer cannot set the clipboard or the title,
 * move the cursor or hide text; to a pipe or a file, the text exactly as it is, byte for byte (scripts read it).
 */
function forStream(stream: { isTTY?: boolean }, text: string): string {
  return stream.isTTY ? visibleControls(text) : text;
}

function report(kernel: Kernel, ctx: ModeContext, session: Session, result: RunResult, write: (value: unknown) => void): number {
  const format = ctx.options.outputFormat;
  if (format === 'json' || format === 'stream-json') write(protocol.resultMessage(session, result, kernel.state.get().cost || result.costUsd, modelUsageOf(kernel)));
  else if (!result.isError) ctx.io.stdout.write(forStream(ctx.io.stdout, result.result.endsWith('\n') ? result.result : `${result.result}\n`));
  if (result.aborted) return 130;
  if (result.isError) {
    // Every failure is one line on stderr, whatever the format; json formats also carry it in the result.
    ctx.io.stderr.write(`keel: ${forStream(ctx.io.stderr, result.error ?? result.subtype)}\n`);
    return 1;
  }
  return 0;
}
