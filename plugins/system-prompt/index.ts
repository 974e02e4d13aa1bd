import os from 'node:os';
import { definePlugin, Stage } from '../../kernel/index.js';

export interface SystemPromptOptions {
  /** Replace Keel's base instructions. */
  text?: string;
}

const BASE = `You are Keel, a coding agent working in the user's terminal, inside their project.
Work carefully and finish the task: read before you edit, keep changes small and in the style of the code around them, and run the project's checks when you can.
Use the tools to act; prefer the file tools to shell commands for reading, searching and editing files.
Be brief: say what you did and what the user needs to know, without preamble.`;

/** The base system prompt: who Keel is and where it runs. Stable text first, so it can be cached. */
export default definePlugin((opts: SystemPromptOptions = {}) => ({
  name: 'system-prompt',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.hooks.contextLoad.tapPromise({ name: 'system-prompt', stage: Stage.FIRST }, async (context, turn) => {
      const env = [
        `Working directory: ${turn.session.cwd}`,
        `Project root: ${turn.session.projectRoot}`,
        `Platform: ${os.platform()} ${os.release()}`,
        `Shell: ${process.env.SHELL ?? '/bin/sh'}`,
      ].join('\n');
      return {
        ...context,
        system: [{ type: 'text', text: opts.text ?? BASE }, { type: 'text', text: `<env>\n${env}\n</env>` }, ...context.system],
      };
    });
  },
}));
