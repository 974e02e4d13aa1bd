/**
 * The `sdk` and `subagent` frontends: Claude Code's stream-json protocol over stdin/stdout. `sdk` serves a
 * host process (many turns, control requests both ways); `subagent` serves a parent Keel's `agent` call
 * (one task, permission questions go up to the parent). The protocol driver is loaded when a mode runs.
 */
import { definePlugin, KeelError, type protocol } from '../../kernel/index.js';
import { driverOf } from './session-driver.js';

export type { DriverOptions, Incoming, AgentsService, AgentDefinitionInput } from './driver.js';
export type OutMessage = protocol.OutMessage;

export default definePlugin(() => ({
  name: 'sdk',
  kernel: '^1.0.0',
  apply(kernel) {
    // Claude Code's flag for SDK hosts that answer permission questions themselves (can_use_tool requests).
    kernel.flags.register({
      name: 'permission-prompt-tool',
      value: '<tool>',
      description: 'stdio: ask the SDK host (can_use_tool control requests)',
      modes: ['sdk'],
      parse(value) {
        if (value !== 'stdio') throw new KeelError(`--permission-prompt-tool: only "stdio" is supported, got "${value}"`, { exitCode: 2 });
        return value;
      },
    });
    kernel.hooks.askUser.tapPromise('sdk', async (question, turn) => {
      if (question.kind !== 'permission') return undefined;
      return driverOf(turn.session)?.ask(question, turn);
    });

    kernel.modes.register({
      name: 'sdk',
      async run(ctx) {
        const { runSdkMode } = await import('./cold.js');
        return runSdkMode(kernel, ctx);
      },
    });

    kernel.modes.register({
      name: 'subagent',
      async run(ctx) {
        const { runSubagentMode } = await import('./cold.js');
        return runSubagentMode(kernel, ctx);
      },
    });
  },
}));
