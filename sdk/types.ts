/** The options and messages of `query()`: Claude Code's stream-json protocol as TypeScript shapes. */
import type { ContentBlockParam, KeelConfig, Plugin, Preset } from '../kernel/index.js';

/** A user turn, as a host sends it. */
export interface SDKUserMessage {
  type: 'user';
  message: { role: 'user'; content: string | ContentBlockParam[] };
  parent_tool_use_id?: string | null;
  session_id?: string;
}

/**
 * A message Keel sends: `system` (`init`, `error`, `api_retry`, `compact_boundary`), `assistant`, `user`
 * (tool results), `stream_event` (with `includePartialMessages`) and `result`; see the README for every field.
 */
export interface SDKMessage {
  type: 'system' | 'assistant' | 'user' | 'result' | 'stream_event';
  subtype?: string;
  session_id?: string | null;
  parent_tool_use_id?: string | null;
  [field: string]: unknown;
}

export type PermissionResult = { behavior: 'allow'; updatedInput?: unknown } | { behavior: 'deny'; message?: string };

export interface CanUseToolContext {
  signal: AbortSignal;
  toolUseId: string;
  /** Why the policy asks. */
  reason?: string;
  /** Set when a sub-agent asks. */
  subagent?: { name: string; parent_tool_use_id: string };
}

export type CanUseTool = (toolName: string, input: unknown, context: CanUseToolContext) => Promise<PermissionResult>;

export interface AgentDefinition {
  description: string;
  prompt: string;
  tools?: string[];
  model?: string;
}

export interface QueryOptions {
  /** `in-process` (default): a kernel in this process, no child. `process`: spawn the `keel` CLI. */
  transport?: 'in-process' | 'process';
  cwd?: string;
  model?: string;
  /** auto | edits | ask | manual, or Claude Code's default | acceptEdits | bypassPermissions. */
  permissionMode?: string;
  systemPrompt?: string | string[];
  appendSystemPrompt?: string;
  /** Permission rules to allow / deny (Keel's or Claude Code's tool names). */
  allowedTools?: string[];
  disallowedTools?: string[];
  /** The only tools the agent has. */
  tools?: string[];
  maxTurns?: number;
  /** Claude Code's `maxBudgetUsd`: no model request starts once the session's cost reached it (`error_max_budget_usd`). */
  maxBudgetUsd?: number;
  /** Claude Code's `fallbackModel`: the model to switch to when the main one stays overloaded. */
  fallbackModel?: string;
  /** Claude Code's `outputFormat`: the run ends in an answer valid against `schema` (the result's `structured_output`). */
  outputFormat?: { type: 'json_schema'; schema: Record<string, unknown> };
  /** Resume a session by id (or id prefix); `continue` resumes the project's newest. */
  resume?: string;
  continue?: boolean;
  sessionId?: string;
  includePartialMessages?: boolean;
  agents?: Record<string, AgentDefinition>;
  /** Answers permission questions; without it, calls that need approval are denied. */
  canUseTool?: CanUseTool;
  /** Aborting it interrupts the running turn and ends the query. */
  abortController?: AbortController;
  /** Environment for the kernel (API key, base URL, KEEL_HOME) or the child; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** In-process: a preset by name or object (default `default`), more plugins, and config keys. */
  preset?: string | Preset;
  plugins?: Plugin[];
  config?: KeelConfig & Record<string, unknown>;
  /** Process: the launcher to run (default this package's `bin/keel.js`), and where its stderr goes. */
  executable?: string;
  stderr?: (text: string) => void;
}

export interface Query extends AsyncIterableIterator<SDKMessage> {
  /** Stops the running turn; its `result` arrives with subtype `error_during_execution`. */
  interrupt(): Promise<void>;
  setPermissionMode(mode: string): Promise<void>;
  setModel(model?: string): Promise<void>;
}
