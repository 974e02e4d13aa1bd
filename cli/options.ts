/** Everything the terminal face parses from the command line; the kernel's `CliOptions` is the part frontends read. */
import type { CliOptions } from '../kernel/types.js';

export interface CommandLine extends CliOptions {
  print?: string | boolean;
  inputFormat: 'text' | 'stream-json';
  continue?: boolean;
  forkSession?: boolean;
  model?: string;
  smallModel?: string;
  /** `--ui`: the interactive frontend (`ink`, `plain`). */
  ui?: string;
  trust?: boolean;
  /** Set for interactive runs: the UI asks about folder trust, so assembling does not warn. */
  askTrust?: boolean;
  verbose?: boolean;
  /** Claude Code's flags, turned into config values (cli/claude-compat.ts). */
  allowedTools?: string[];
  disallowedTools?: string[];
  tools?: string[];
  systemPrompt?: string;
  appendSystemPrompt?: string;
  dangerouslySkipPermissions?: boolean;
  addDir?: string[];
  sessionId?: string;
  /** Headless limits and goals (plugins structured-output, budget, model-fallback, goal read them as config). */
  jsonSchema?: Record<string, unknown>;
  maxBudgetUsd?: number;
  fallbackModel?: string;
  goal?: string;
  goalCheck?: string;
  /** Claude Code's `--agents <json>`: custom sub-agents by name (plugin tool-agent). */
  agents?: Record<string, unknown>;
  /** Claude Code's `--debug [filter]`: diagnostics on stderr, of the sources the filter names ("api,hooks", "!mcp-bridge"). */
  debug?: string | boolean;
}
