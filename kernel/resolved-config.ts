/**
 * The shape of the configuration every plugin reads from `kernel.config`, and its defaults. Where it comes from
 * (files, the environment, flags, `query()` options) is the face's business: see cli/config.ts.
 */
import type { KeelConfig, McpServerConfig, PermissionRules, Plugin, Preset } from './plugin.js';
import type { PermissionMode } from './types.js';

export type LayerKind = 'defaults' | 'user' | 'project' | 'env' | 'flags' | 'managed';

/** One source of settings: a file, the environment or the command line. */
export interface ConfigLayer {
  kind: LayerKind;
  /** A file path, or `env` / `flags`. Named in every error about this layer. */
  source: string;
  values: Record<string, unknown>;
  /** How to name a key of this layer in errors, e.g. `--permission-mode` or `KEEL_MODEL`. */
  labels?: Record<string, string>;
}

/** A plugin or preset that config named by package, and where it was loaded from. */
export interface PackageSource {
  kind: 'plugin' | 'preset';
  /** The plugin's or preset's own name. */
  provides: string;
  package: string;
  version?: string;
  /** The package folder it was loaded from. */
  path: string;
  /** What named it: a config file, `flags` or `env`, and the key (`plugins.2`, `preset`, `preset.extends`). */
  source: string;
  key: string;
}

/** One entry of `allowedMcpServers` / `deniedMcpServers` (Claude Code's shape): exactly one field is set. */
export interface McpServerMatcher {
  serverName?: string;
  /** The server's command and arguments, exactly. */
  serverCommand?: string[];
  /** The server's URL; `*` matches any run of characters. */
  serverUrl?: string;
}

/**
 * What managed settings (files an administrator installs, read by the face) pin for this run. Their deny/ask
 * rules, model, env and hooks are ordinary config values of the highest layer; these are the switches that are
 * not config values of their own.
 */
export interface ManagedPolicy {
  /** The managed files read, lowest precedence first. */
  files: string[];
  /** `permissions.disableBypassPermissionsMode: "disable"`: auto (bypassPermissions) mode is refused. */
  disableBypassPermissionsMode?: string;
  /** `allowManagedHooksOnly: true`: hooks from any other layer are dropped; the file that set it. */
  allowManagedHooksOnly?: string;
  /** Each managed file's allow list: a server must match every one (no list: every server may start). */
  allowedMcpServers: Array<{ file: string; servers: McpServerMatcher[] }>;
  /** Servers that never start, whatever allows them. */
  deniedMcpServers: Array<{ file: string; servers: McpServerMatcher[] }>;
  /** The pinned model and the file that pinned it. */
  model?: { value: string; file: string };
}

/** The merged configuration every plugin reads from `kernel.config`. */
export type ResolvedConfig = Omit<KeelConfig, 'preset' | 'plugins' | 'disable' | 'permissionMode'> & {
  model: string;
  smallModel: string;
  permissionMode: PermissionMode;
  maxTurns: number;
  maxTokens: number;
  preset: string | Preset;
  plugins: Plugin[];
  disable: string[];
  mcpServers: Record<string, McpServerConfig>;
  permissions: Required<PermissionRules>;
  tools?: string[];
  cwd: string;
  projectRoot: string;
  keelHome: string;
  /** False when the project folder is not trusted: its code, MCP servers and hooks must not run. */
  trusted?: boolean;
  /**
   * The config modules found (the user's, the project's or the one `--config` names), loaded or not: protected
   * for writes by their real path, so neither an odd `--config` name nor a symlink's target escapes.
   */
  configFiles?: string[];
  /** Plugins and presets that config named by package, with the folder each was loaded from. */
  packages?: PackageSource[];
  /** The project files that were not loaded because the folder is not trusted. */
  untrustedFiles?: string[];
  /** Present when managed settings were found: see ManagedPolicy. */
  managed?: ManagedPolicy;
  /** Which layer set each top-level key, for messages such as "model (from ./agent.config.ts)". */
  sources: Record<string, string>;
  /** Plugin-owned keys that no core field describes, by key. */
  extra: Record<string, unknown>;
  [key: string]: unknown;
};

export const MODE_ALIASES: Record<string, PermissionMode> = {
  auto: 'auto',
  edits: 'edits',
  ask: 'ask',
  manual: 'manual',
  plan: 'plan',
  default: 'ask',
  acceptEdits: 'edits',
  bypassPermissions: 'auto',
};

export function normalizePermissionMode(value: string): PermissionMode | undefined {
  return MODE_ALIASES[value];
}

export const DEFAULTS = {
  model: 'claude-sonnet-5-5',
  smallModel: 'claude-haiku-5-5',
  permissionMode: 'ask' as PermissionMode,
  maxTurns: 100,
  maxTokens: 16384,
  preset: 'default',
};
