/**
 * The shapes every plugin speaks. Messages, content blocks and tools use the Anthropic Messages API shapes
 * (type-only imports: no provider code is loaded by the kernel).
 */
import type {
  ContentBlock,
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
  Tool as AnthropicTool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { ZodType } from 'zod';
import type { Kernel } from './kernel.js';

export type {
  ContentBlock,
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
  AnthropicTool,
  ToolResultBlockParam,
};

/** A question a frontend can put to the user before anything from the folder runs. */
export interface TrustQuestion {
  folder: string;
  /** The project files that would run or be read as config once trusted. */
  files: string[];
}

/** Answers a trust question: true trusts the folder (and remembers it). */
export type TrustPrompt = (question: TrustQuestion) => Promise<boolean>;

export type PermissionLevel = 'read' | 'write' | 'execute' | 'network';
/** `plan`: only read-level tools run, until the user approves a plan (exit_plan_mode). */
export type PermissionMode = 'auto' | 'edits' | 'ask' | 'manual' | 'plan';

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

/** Token usage of one or more model calls, in the API's field names. */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** One turn of the model (request and response) as the loop hands it to `postTurn`. */
export interface TurnRecord {
  request: QueryRequest;
  response: QueryResponse;
  /** The user message appended after the response: the tool results, if any. */
  toolResults: ToolResultBlockParam[];
  apiDurationMs: number;
  /**
   * Set by a `postTurn` tap to keep a finished run going (a Stop hook's objection): when the response ended the
   * run, this message is appended and the model is asked again, within `maxTurns`.
   */
  followUp?: MessageParam;
  /** Set by a `postTurn` tap to end the run now with this error subtype (structured output retries used up). */
  end?: { subtype: RunResult['subtype']; error: string };
  /** Fields a `postTurn` tap adds to the run's result message (`goal`); later turns overwrite earlier ones. */
  fields?: Record<string, unknown>;
}

/** The model request the loop (or an auxiliary caller) asks the `query` hook to answer. */
export interface QueryRequest {
  /** `main` for the agent loop, `small` for summaries and other auxiliary calls (never streamed to the UI). */
  tier: 'main' | 'small';
  model: string;
  system: TextBlockParam[];
  messages: MessageParam[];
  tools: AnthropicTool[];
  maxTokens: number;
  thinking?: { budget_tokens: number };
  signal?: AbortSignal;
  /** When false, providers should not emit delta events (auxiliary calls). Default true for `main`. */
  stream?: boolean;
}

export interface QueryResponse {
  id?: string;
  model: string;
  content: ContentBlock[];
  stopReason: StopReason | null;
  stopSequence?: string | null;
  usage: TokenUsage;
  /** Cost of this call in USD, when the provider knows its prices. */
  costUsd?: number;
}

/** A tool call as the model asked for it. `input` is unvalidated. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

export type ToolResultContent = string | Array<TextBlockParam | ImageBlockParam | DocumentBlockParam>;

export interface ToolResult {
  content: ToolResultContent;
  isError?: boolean;
  /** Anything a frontend may show beside the result (a diff, an exit code); never sent to the model. */
  display?: Record<string, unknown>;
  /** Model tokens the tool spent (a sub-agent's run): the loop adds them to the run's and the process's totals. */
  spent?: { usage: TokenUsage; costUsd: number };
  /**
   * Ends the run after this turn's tool results, with this text as its result (a plan that a headless run
   * cannot get approved is its answer).
   */
  endRun?: { result: string; fields?: Record<string, unknown> };
}

export type Decision =
  | { behavior: 'allow'; reason?: string }
  | { behavior: 'deny'; reason: string }
  | { behavior: 'ask'; reason?: string; preview?: string };

export type PermissionChoice = 'allow_once' | 'allow_session' | 'deny' | 'deny_session';

export type Question =
  | {
      kind: 'permission';
      call: ToolCall;
      tool?: ToolDefinition;
      reason?: string;
      /** For edits, the diff the frontend shows. */
      preview?: string;
      options: PermissionChoice[];
      /** Set when a sub-agent asks: which agent, and the parent's `agent` call it runs under. */
      subagent?: { name: string; toolUseId: string };
    }
  | { kind: 'text'; prompt: string; secret?: boolean }
  /** Multiple-choice questions from the model (ask_user_question); a frontend may also accept free text. */
  | { kind: 'choice'; questions: ChoiceQuestion[] };

export interface ChoiceQuestion {
  question: string;
  /** A short label (a few words) a frontend may show as a tab or chip. */
  header: string;
  options: Array<{ label: string; description?: string }>;
  multiSelect?: boolean;
}

export type Answer =
  | { kind: 'permission'; choice: PermissionChoice; message?: string; /** Replaces the call's input (re-validated). */ updatedInput?: unknown }
  | { kind: 'text'; text: string }
  /** One entry per question, in order: the labels chosen, or the user's own words. */
  | { kind: 'choice'; answers: string[][] };

/** What `contextLoad` builds for one model call. */
export interface Context {
  system: TextBlockParam[];
  messages: MessageParam[];
  tools?: ToolDefinition[];
  budget: TokenBudget;
}

export interface TokenBudget {
  /** The model's context window in tokens. */
  window: number;
  /** Tokens the context is known or estimated to use. */
  used: number;
  /** Output tokens asked for. */
  maxOutput: number;
}

export interface ToolLoadContext {
  session: Session;
  turn: Turn;
}

export interface ToolContext {
  signal: AbortSignal;
  session: Session;
  turn: Turn;
  call: ToolCall;
  kernel: Kernel;
  /** The directory relative paths resolve against (the shell's current directory for bash). */
  cwd: string;
  emit(event: AgentEvent): void;
}

/** A tool. `input` is a zod schema; the JSON Schema sent to the model is derived from it. */
export interface ToolDefinition<I = any> {
  name: string;
  description: string;
  permission: PermissionLevel;
  input: ZodType<I>;
  /** An explicit JSON Schema for tools whose schema comes from elsewhere (MCP); otherwise derived from `input`. */
  jsonSchema?: Record<string, unknown>;
  /**
   * A provider-side tool (Anthropic's `web_search_20250305`): sent to the model exactly as given instead of a
   * schema; the provider runs it, so `execute` only answers a client call that should not happen.
   */
  serverTool?: Record<string, unknown> & { type: string; name: string };
  /** Deferred tools are left out of requests until `loadWhen` says so or `tool_search` loads them. */
  deferLoading?: boolean;
  loadWhen?: (ctx: ToolLoadContext) => boolean;
  /** Calls of this tool may run concurrently with each other and with reads (each `agent` call is its own process). */
  concurrent?: boolean;
  /** Paths a call touches, for permission checks (resolved against the session cwd). */
  paths?: (input: I) => string[];
  execute(input: I, ctx: ToolContext): Promise<ToolResult>;
}

export interface CommandContext {
  kernel: Kernel;
  session: Session;
  print(text: string): void;
  signal: AbortSignal;
}

/** A slash command such as `/compact`. */
export interface CommandDefinition {
  name: string;
  description: string;
  run(args: string, ctx: CommandContext): Promise<void | string>;
}

/**
 * A sub-command of the `keel` binary (`keel mcp list`), registered by the plugin that owns it. The CLI
 * dispatches `keel <name> …` here when no built-in sub-command has that name; `args` are the words after it.
 * `keel --help` lists it; `keel <name> --help` prints its usage, description and options instead of running it.
 */
export interface SubcommandDefinition {
  name: string;
  description: string;
  /** `keel mcp <list|get|add|remove> …`; default `keel <name>`. */
  usage?: string;
  /** Its own options, for its help: `[['--json', 'print JSON']]`. */
  options?: ReadonlyArray<readonly [flag: string, description: string]>;
  run(args: string[], ctx: { kernel: Kernel; io: Io; env: NodeJS.ProcessEnv }): Promise<number>;
}

/** A frontend: interactive, print, sdk, subagent. Returns the process exit code. */
export interface ModeDefinition {
  name: string;
  run(ctx: ModeContext): Promise<number>;
  /** Interactive UIs: asks whether to trust an untrusted project folder before its settings load. */
  askTrust?: TrustPrompt;
}

export type DetectedMode = 'subagent' | 'sdk' | 'headless' | 'pipe' | 'interactive';

/**
 * A command-line flag a plugin adds (`kernel.flags.register`): `keel --help` lists it with its plugin, and its
 * value reaches every frontend as `ctx.options.flags[name]`. Plugin flags are read once the plugins are known,
 * so they cannot change how Keel is assembled (preset, config, trust).
 */
export interface FlagDefinition {
  /** The long name without dashes (`permission-prompt-tool`). */
  name: string;
  /** `<value>` (required) or `[value]` (optional); none for a switch. */
  value?: string;
  description: string;
  /** The modes it means something in, for `--help`; none: every mode. */
  modes?: DetectedMode[];
  /** The values it accepts. */
  choices?: string[];
  /** Checks and converts a value (throw a KeelError that names the flag). */
  parse?(value: string): unknown;
}

/**
 * What frontends and plugins read of the command line (`ctx.options`, `configLayers`). The terminal face parses
 * more (cli/options.ts): flags it turns into config values reach plugins as `kernel.config`, not here.
 */
export interface CliOptions {
  outputFormat: 'text' | 'json' | 'stream-json';
  resume?: string | boolean;
  permissionMode?: string;
  maxTurns?: number;
  preset?: string;
  config?: string;
  /** `--mcp-config <file|json>`, repeatable, and Claude Code's `--strict-mcp-config` (plugin mcp-bridge). */
  mcpConfig?: string[];
  strictMcpConfig?: boolean;
  /** Claude Code's `--settings <file|json>` and `--setting-sources user,project,local` (plugin claude-settings). */
  settings?: string;
  settingSources?: string[];
  includePartialMessages?: boolean;
  /** The values of the flags plugins registered (`kernel.flags`), by name. */
  flags?: Record<string, unknown>;
}

export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface ModeContext {
  kernel: Kernel;
  mode: DetectedMode;
  options: CliOptions;
  /** The prompt from `-p` and/or stdin, already joined. */
  prompt?: string;
  io: Io;
  /** Aborted by SIGINT/SIGTERM. */
  signal: AbortSignal;
  startSession(overrides?: Partial<SessionInit>): Promise<Session>;
}

export interface SessionInit {
  id: string;
  cwd: string;
  projectRoot: string;
  model: string;
  smallModel: string;
  permissionMode: PermissionMode;
  preset: string;
  parentSessionId?: string;
  /** Replaces the base system prompt for this session (SDK `initialize`, a custom agent's body). */
  systemPrompt?: string;
  /** Appended to the system prompt for this session. */
  appendSystemPrompt?: string;
  /** `--resume <id>` / `--continue` / fork, for the session store to act on at `sessionStart`. */
  resume?: { id?: string; latest?: boolean; fork?: boolean };
}

/** One conversation. Plugins keep per-session state in `data`, keyed by their own name. */
export interface Session extends SessionInit {
  /** The full history the loop appends to; compaction may rewrite it. */
  messages: MessageParam[];
  data: Map<string, unknown>;
  startedAt: number;
  /** Set by the session store when it resumed an earlier session. */
  resumedFrom?: string;
  /** What earlier runs spent, set by the session store on resume and fork; usage accounting starts from it. */
  inherited?: InheritedUsage;
}

export interface InheritedUsage {
  /** The session the totals come from (the same id on resume, the parent on fork). */
  from: string;
  forked: boolean;
  costUsd: number;
  /** Model calls; undefined when the file predates call counts. */
  calls?: number;
  usage?: TokenUsage;
}

/** One model call inside a run. */
export interface Turn {
  session: Session;
  kernel: Kernel;
  index: number;
  signal: AbortSignal;
  data: Map<string, unknown>;
  emit(event: AgentEvent): void;
  /** The run's remaining model turns, for tools that make model calls of their own (sub-agents); unset outside a run. */
  turns?: TurnAllowance;
}

/**
 * What is left of a run's `maxTurns`. A tool that runs model turns elsewhere (a sub-agent) takes its share first;
 * what it takes counts as the run's turns, so the run and everything it starts stay within one limit.
 */
export interface TurnAllowance {
  /** The limit of the run (`maxTurns`). */
  readonly max: number;
  /** Turns the run may still take after the current one. */
  left(): number;
  /** Takes up to `wanted` turns (fewer when fewer are left) and returns how many were taken. */
  take(wanted: number): number;
  /** Returns turns that were taken and not used. */
  giveBack(unused: number): void;
}

export interface RunResult {
  subtype: 'success' | 'error_max_turns' | 'error_during_execution' | 'error_max_budget_usd' | 'error_max_structured_output_retries';
  isError: boolean;
  result: string;
  stopReason: StopReason | null;
  refusal?: boolean;
  aborted?: boolean;
  error?: string;
  numTurns: number;
  /** Turns tools (sub-agents) used from this run's allowance, beside its own `numTurns`. */
  toolTurns?: number;
  durationMs: number;
  durationApiMs: number;
  usage: TokenUsage;
  costUsd: number;
  permissionDenials: PermissionDenial[];
  /** Fields plugins add to the result message (`structured_output`, `goal`), in Claude Code's spelling. */
  fields?: Record<string, unknown>;
}

export interface PermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: unknown;
}

/**
 * Events for observers. Plugins add their own by augmenting this map:
 * `declare module 'keel' { interface AgentEventMap { 'my-event': { x: number } } }`.
 */
export interface AgentEventMap {
  session_start: { session: Session };
  user_message: { message: MessageParam };
  turn_start: { turn: number };
  text_delta: { text: string; index: number };
  thinking_delta: { text: string; index: number };
  tool_input_delta: { partialJson: string; index: number; toolUseId?: string };
  /** Partial text of a broken stream is withdrawn before a retry. */
  withdraw: { reason: string };
  assistant_message: { message: MessageParam; response: QueryResponse };
  tool_results: { message: MessageParam };
  tool_start: { call: ToolCall; tool?: ToolDefinition };
  tool_output: { id: string; chunk: string; stream: 'stdout' | 'stderr' };
  tool_end: { call: ToolCall; result: ToolResult; durationMs: number };
  /** An answer or a refusal: `source` is `user` (an answer), `askUser` (nobody could be asked) or `policy` (refused unasked). */
  permission: { call: ToolCall; decision: Decision; source: string; choice?: PermissionChoice };
  retry: { attempt: number; maxRetries: number; delayMs: number; cause: string };
  tools_bytes: { bytes: number; count: number; names: string[] };
  usage: { usage: TokenUsage; costUsd: number; model: string; tier: 'main' | 'small' };
  /** Before compaction frees room (PreCompact hooks run here). */
  compact_start: { session: Session; trigger: 'auto' | 'manual' | 'overflow'; instructions?: string };
  compact: { trigger: 'auto' | 'manual' | 'overflow' | 'snip'; preTokens: number; postTokens: number; tier: string };
  refusal: { text: string };
  log: { level: 'debug' | 'info' | 'warn' | 'error'; message: string; source?: string };
  result: { result: RunResult };
  /** A line of a sub-agent's stream-json output, relayed by the parent's `agent` call `toolUseId`. */
  subagent: { toolUseId: string; agent: string; message: Record<string, unknown> };
}

export type AgentEvent = {
  [K in keyof AgentEventMap]: { type: K } & AgentEventMap[K];
}[keyof AgentEventMap];

export type EventOf<K extends keyof AgentEventMap> = { type: K } & AgentEventMap[K];

/** Values in `kernel.state`, the store frontends read. Plugins augment this interface. */
export interface AppState {
  messages: MessageParam[];
  isLoading: boolean;
  currentToolCall: ToolCall | null;
  tokenUsage: TokenUsage;
  cost: number;
  /** Tokens the live context uses and the window, for status lines and compaction. */
  contextTokens: number;
  contextWindow: number;
  todos: Array<{ content: string; status: 'pending' | 'in_progress' | 'completed'; activeForm?: string }>;
  /** A line to show under the prompt (plugin `status-line`: the user's `statusLine` command's output); ANSI colours kept. */
  statusLine?: string;
}

/**
 * Named services plugins offer each other. The plugin that offers one types it by augmenting this interface
 * (`declare module 'keel' { interface Services { compaction: Compactor } }`), so consumers need no import of it.
 */
export interface Services {
  /** Frees room in the live context; used by the loop's overflow and `max_tokens` routes. */
  compaction: Compactor;
  [name: string]: unknown;
}

export interface Compactor {
  /** Returns true when it freed room. */
  compact(session: Session, opts: { trigger: 'auto' | 'manual' | 'overflow'; instructions?: string; signal?: AbortSignal }): Promise<boolean>;
}

