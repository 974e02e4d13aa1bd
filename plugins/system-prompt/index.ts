import os from 'node:os';
import { z } from 'zod';
import { definePlugin, Stage, type Session } from '../../kernel/index.js';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Replaces Keel's base instructions (`--system-prompt`). */
    systemPrompt?: string;
    /** Appended after every other system section (`--append-system-prompt`). */
    appendSystemPrompt?: string;
  }
}

export interface SystemPromptOptions {
  /** Replace Keel's base instructions. */
  text?: string;
}

// The base prompt in three sections; an output style (service `output-style`) replaces TONE and, unless it keeps
// them, CODING. Without a style the text is the three joined, as it always was.
const IDENTITY = `You are Keel, a coding agent working in the user's terminal, inside their project.`;
const CODING = `Work carefully and finish the task: read before you edit, keep changes small and in the style of the code around them, and run the project's checks when you can.
Use the tools to act; prefer the file tools to shell commands for reading, searching and editing files.`;
const TONE = `Be brief: say what you did and what the user needs to know, without preamble.`;
const BASE = [IDENTITY, CODING, TONE].join('\n');

/** What this plugin reads from the `output-style` service (plugin `output-styles`), when the preset has one. */
interface StyleSource {
  active(session: Session): { prompt: string; keepCodingInstructions: boolean } | undefined;
}

/**
 * The base text under the session's output style. A replaced base (`--system-prompt`, an SDK host's prompt, a
 * custom agent's body) is its author's whole prompt: a style does not touch it.
 */
export function baseText(base: string | undefined, style: { prompt: string; keepCodingInstructions: boolean } | undefined): string {
  if (base !== undefined) return base;
  if (!style) return BASE;
  return [IDENTITY, ...(style.keepCodingInstructions ? [CODING] : []), style.prompt].join('\n\n');
}

/** The base system prompt: who Keel is and where it runs. Stable text first, so it can be cached. */
export default definePlugin((opts: SystemPromptOptions = {}) => ({
  name: 'system-prompt',
  kernel: '^1.0.0',
  config: { systemPrompt: z.string(), appendSystemPrompt: z.string() },
  apply(kernel) {
    const configured = kernel.config.systemPrompt as string | undefined;
    const appended = kernel.config.appendSystemPrompt as string | undefined;
    const styles = () => kernel.services.get('output-style') as Partial<StyleSource> | undefined;
    // Appended last, after instructions and memory, as Claude Code's --append-system-prompt is.
    kernel.hooks.contextLoad.tapPromise({ name: 'system-prompt', stage: Stage.LAST }, async (context, turn) => {
      const extra = [appended, turn.session.appendSystemPrompt].filter((text): text is string => Boolean(text));
      return extra.length ? { ...context, system: [...context.system, ...extra.map((text) => ({ type: 'text' as const, text }))] } : context;
    });
    kernel.hooks.contextLoad.tapPromise({ name: 'system-prompt', stage: Stage.FIRST }, async (context, turn) => {
      const env = [
        `Working directory: ${turn.session.cwd}`,
        `Project root: ${turn.session.projectRoot}`,
        `Platform: ${os.platform()} ${os.release()}`,
        `Shell: ${process.env.SHELL ?? '/bin/sh'}`,
      ].join('\n');
      return {
        ...context,
        system: [{ type: 'text', text: baseText(turn.session.systemPrompt ?? configured ?? opts.text, styles()?.active?.(turn.session)) }, { type: 'text', text: `<env>\n${env}\n</env>` }, ...context.system],
      };
    });
  },
}));
