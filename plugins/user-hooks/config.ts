/** The `hooks` config key, in Claude Code's shape: event → matchers → shell commands. */
import { z } from 'zod';
import { claudeToolName } from '../../kernel/index.js';

export const EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SubagentStop', 'SessionStart', 'SessionEnd', 'PreCompact', 'Notification'] as const;
export type HookEvent = (typeof EVENTS)[number];

function validRegExp(text: string): boolean {
  try {
    new RegExp(text);
    return true;
  } catch {
    return false;
  }
}

const commandSchema = z
  .object({
    type: z.literal('command'),
    command: z.string().min(1),
    /** Seconds; default 60. */
    timeout: z.number().positive().max(3600).optional(),
  })
  .strict();

const matcherSchema = z
  .object({
    /** A regular expression over the tool name (Keel's or Claude Code's), the SessionStart source or the PreCompact trigger; empty or `*` matches all. */
    matcher: z
      .string()
      .refine((text) => validRegExp(text), { message: 'not a valid regular expression' })
      .optional(),
    hooks: z.array(commandSchema).min(1),
  })
  .strict();

export const hooksSchema = z.partialRecord(z.enum(EVENTS), z.array(matcherSchema));

export type HooksConfig = z.infer<typeof hooksSchema>;
export type HookCommand = z.infer<typeof commandSchema>;

/** Claude Code's name for a Keel tool, when it has one: hook scripts written for Claude Code see the names they expect. */
export function claudeAlias(name: string): string | undefined {
  const alias = claudeToolName(name);
  return alias === name ? undefined : alias;
}

export interface CompiledMatcher {
  test(subject: string, alias?: string): boolean;
  hooks: HookCommand[];
}

/** Compiles every event's matchers. */
export function compile(config: HooksConfig): Partial<Record<HookEvent, CompiledMatcher[]>> {
  const out: Partial<Record<HookEvent, CompiledMatcher[]>> = {};
  for (const event of EVENTS) {
    const list = config[event];
    if (!list) continue;
    out[event] = list.map((entry) => {
      const text = entry.matcher ?? '';
      if (text === '' || text === '*') return { test: () => true, hooks: entry.hooks };
      // Validated with the config; anchored like Claude Code's matchers (`Edit|Write` is the whole name).
      const pattern = new RegExp(`^(?:${text})$`);
      return { test: (subject: string, alias?: string) => pattern.test(subject) || (alias !== undefined && pattern.test(alias)), hooks: entry.hooks };
    });
  }
  return out;
}
