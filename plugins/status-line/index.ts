/**
 * The status line (Claude Code's `statusLine` setting): `{ type: 'command', command, padding? }` from config or
 * `.claude/settings.json`. While an interactive UI watches (service `status-line`), the command runs after each
 * event that changes what it is told (at most every 300 ms, 2 s timeout, never two at once), gets a JSON object
 * on stdin, and the first line it prints goes to `kernel.state.statusLine`, which both UIs show under the prompt.
 * A project's `statusLine` runs only in a trusted project.
 */
import path from 'node:path';
import { definePlugin, z, type AgentEvent, type Kernel, type Session } from '../../kernel/index.js';
import type { Tally } from './input.js';
import type { StatusRunner } from './runner.js';

const NAME = 'status-line';

export const statusLineSchema = z.looseObject({
  type: z.literal('command'),
  command: z.string().min(1),
  padding: z.number().int().min(0).max(40).optional(),
});
export type StatusLineConfig = z.infer<typeof statusLineSchema>;

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** A command whose first line of output is shown under the prompt (Claude Code's `statusLine`). */
    statusLine?: StatusLineConfig;
  }
}

/** What an interactive UI calls while it shows the prompt; the returned function stops the command. */
export interface StatusLineService {
  watch(): () => void;
}

/** Events after which what the command is told may have changed. */
const TRIGGERS = new Set<AgentEvent['type']>(['session_start', 'assistant_message', 'tool_end', 'usage', 'compact', 'result', 'user_message']);

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Null when the setting may run; else why not. A project's setting needs a trusted project. */
export function refusal(kernel: Kernel): string | null {
  const source = kernel.config.sources.statusLine;
  if (kernel.config.trusted !== false || !source) return null;
  const file = path.resolve(kernel.config.cwd, source);
  return isInside(file, kernel.config.projectRoot) ? `statusLine (from ${source}) does not run: the project is not trusted (keel trust)` : null;
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { statusLine: statusLineSchema },
  apply(kernel) {
    const setting = kernel.config.statusLine as StatusLineConfig | undefined;
    let session: Session | undefined;
    let runner: StatusRunner | null = null;
    let watching = false;
    let toldFailure = false;
    let toldRefusal = false;
    const tallies = new WeakMap<Session, Tally>();
    const tallyOf = (s: Session) => {
      let tally = tallies.get(s);
      if (!tally) tallies.set(s, (tally = { linesAdded: 0, linesRemoved: 0, apiDurationMs: 0 }));
      return tally;
    };

    kernel.hooks.sessionStart.tapPromise(NAME, async (started) => {
      // Sub-agents and auxiliary sessions run in other processes; the last session started is the one on screen.
      session = started;
    });

    kernel.hooks.event.tap(NAME, (event) => {
      if (!session) return;
      if (event.type === 'tool_end' && !event.result.isError) {
        const tally = tallyOf(session);
        const display = event.result.display;
        // A file tool says what it changed (tools-fs: `linesAdded`, `linesRemoved`).
        if (typeof display?.linesAdded === 'number') tally.linesAdded += display.linesAdded;
        if (typeof display?.linesRemoved === 'number') tally.linesRemoved += display.linesRemoved;
      } else if (event.type === 'result') {
        tallyOf(session).apiDurationMs += event.result.durationApiMs;
      }
      if (runner && TRIGGERS.has(event.type)) runner.request();
    });

    const style = (s: Session) => (kernel.services.get('output-style') as { active?(s: Session): { name: string } | undefined } | undefined)?.active?.(s)?.name ?? 'default';

    /** Starts the command's runner (its code is a cold part); returns what stops it. */
    const start = async (config: StatusLineConfig, stopped: () => boolean): Promise<() => void> => {
      const { StatusRunner, statusInput } = await import('./cold.js');
      if (stopped()) return () => undefined;
      const pad = ' '.repeat(config.padding ?? 0);
      const active = new StatusRunner({
        command: config.command,
        input: () => {
          if (!session) throw new Error('no session yet');
          const store = kernel.services.get('session-store') as { fileOf?: (s: Session) => string | undefined } | undefined;
          const transcript = store?.fileOf?.(session) ?? null;
          return { cwd: session.cwd, json: JSON.stringify(statusInput(session, kernel.state.get(), tallyOf(session), style(session), Date.now(), transcript)) };
        },
        show: (line) => {
          const text = line ? `${pad}${line}` : '';
          if ((kernel.state.get().statusLine ?? '') !== text) kernel.state.set({ statusLine: text });
        },
        failed: (reason) => {
          // Shown with --verbose, once: a broken command must not flood the log on every event.
          if (!toldFailure) kernel.log('debug', `statusLine command failed (${reason}): ${config.command}`, NAME);
          toldFailure = true;
        },
      });
      runner = active;
      // What no event announces (Shift+Tab's mode, /model, a cost or context change) is caught by comparing.
      let seen = '';
      const key = () => (session ? [session.id, session.model, session.permissionMode, session.cwd, style(session)].join('\0') : '');
      const stopState = kernel.state.subscribe((next, previous) => {
        if (next.cost !== previous.cost || next.contextTokens !== previous.contextTokens || next.contextWindow !== previous.contextWindow) active.request();
      });
      const poll = setInterval(() => {
        const now = key();
        if (now !== seen) {
          seen = now;
          active.request();
        }
      }, 500);
      poll.unref();
      if (session) active.request();
      return () => {
        clearInterval(poll);
        stopState();
        active.stop();
        if (runner === active) runner = null;
        if (kernel.state.get().statusLine) kernel.state.set({ statusLine: '' });
      };
    };

    const service: StatusLineService = {
      watch() {
        if (!setting || watching) return () => undefined;
        const refused = refusal(kernel);
        if (refused) {
          if (!toldRefusal) kernel.log('warn', refused, NAME);
          toldRefusal = true;
          return () => undefined;
        }
        watching = true;
        let stopped = false;
        const started = start(setting, () => stopped).catch((err: unknown) => {
          kernel.log('warn', `the status line could not start: ${err instanceof Error ? err.message : String(err)}`, NAME);
          return () => undefined;
        });
        return () => {
          if (stopped) return;
          stopped = true;
          watching = false;
          void started.then((stop) => stop());
        };
      },
    };
    kernel.services.provide(NAME, service);
  },
}));
