/**
 * The `acp` frontend: `keel acp` serves the Agent Client Protocol over stdio, so editors (Zed, the JetBrains
 * IDEs, Neovim and Emacs plugins) host Keel as their agent. Only the registrations live here; the protocol
 * server, the ACP SDK and everything a session needs load from ./cold.js when `keel acp` runs.
 *
 * What a session served over ACP needs from the other plugins goes through the kernel: questions through
 * `askUser`, file reads and writes through the `file-access` service the file tools consult, bash through the
 * `terminal` service the bash tool consults. Each looks up the session's host in `session.data`, set only by an
 * ACP session, so in any other run they stand aside.
 */
import { definePlugin, type Answer, type Question, type Session, type Turn } from '../../kernel/index.js';
import { hostOf, requireHost } from './host.js';

export type { AcpHost } from './host.js';

const NAME = 'acp';

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.hooks.askUser.tapPromise(NAME, async (question: Question, turn: Turn): Promise<Answer | undefined> => hostOf(turn.session)?.ask(question, turn));

    kernel.services.provide('file-access', {
      handles: (session: Session, what: 'read' | 'write') => hostOf(session)?.handlesFiles(what) ?? false,
      readText: async (session: Session, abs: string, signal: AbortSignal) => requireHost(session).readText(abs, signal),
      writeText: async (session: Session, abs: string, text: string, signal: AbortSignal) => requireHost(session).writeText(abs, text, signal),
    });
    kernel.services.provide('terminal', {
      handles: (session) => hostOf(session)?.handlesTerminal() ?? false,
      run: async (spec) => requireHost(spec.session).runInTerminal(spec),
    });

    kernel.modes.register({
      name: NAME,
      async run(ctx) {
        const { runAcp } = await import('./cold.js');
        return runAcp(ctx.kernel, ctx.io, ctx.signal);
      },
    });
    kernel.subcommands.register({
      name: NAME,
      description: 'serve the Agent Client Protocol over stdin/stdout: Keel as the agent of an editor (Zed, JetBrains IDEs, …)',
      async run(args, ctx) {
        const { runAcpCommand } = await import('./cold.js');
        return runAcpCommand(args, ctx);
      },
    });
  },
}));
