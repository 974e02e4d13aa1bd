import semver from 'semver';
import type { ZodType } from 'zod';
import type { ConfigLayer } from './resolved-config.js';
import type { Kernel } from './kernel.js';
import type { CliOptions, PermissionMode, ToolDefinition } from './types.js';

/** The semver version of the kernel API. Plugins state the range they were written for in `kernel`. */
export const KERNEL_VERSION = '1.0.0';

const rangeChecks = new Map<string, 'ok' | 'invalid' | 'unsatisfied'>();
/** How a plugin's `kernel` range stands against KERNEL_VERSION; memoised, as nearly every plugin states the same range. */
export function checkKernelRange(range: string): 'ok' | 'invalid' | 'unsatisfied' {
  let check = rangeChecks.get(range);
  if (!check) {
    check = !semver.validRange(range) ? 'invalid' : semver.satisfies(KERNEL_VERSION, range) ? 'ok' : 'unsatisfied';
    rangeChecks.set(range, check);
  }
  return check;
}

/**
 * A plugin: a named unit that taps hooks and registers tools, commands, modes and services.
 * Structural on purpose: a plugin built against another copy of keel is still a plugin.
 */
export interface Plugin {
  /** kebab-case and unique; every tap this plugin makes must carry this name. */
  name: string;
  /** semver range of the kernel API this plugin was written for; checked by `seal()`. */
  kernel: string;
  version?: string;
  /** Plugins that must be registered before this one. Checked, never sorted. */
  dependencies?: string[];
  /** Top-level config keys this plugin owns, validated with the rest of the config after all plugins apply. */
  config?: Record<string, ZodType>;
  /**
   * Settings this plugin reads from files of its own (front matter, `.mcp.json`), as config layers that
   * merge at their layer's precedence and are validated like `agent.config.ts`. Runs before `apply`. When
   * `trusted` is false, project files must not be parsed: return a layer with empty `values` for each project
   * file that holds settings, so the CLI can name it in its warning, and nothing else from the project.
   */
  configLayers?(ctx: { cwd: string; projectRoot: string; keelHome: string; options?: CliOptions; trusted: boolean }): Promise<ConfigLayer[]> | ConfigLayer[];
  /** Called once by `kernel.use()`. Tap hooks and register here, never inside a hook callback. */
  apply(kernel: Kernel): void;
}

/**
 * A named, ordered list of plugins. With `extends`, the base preset's plugins come first (less those named in
 * `disable`, with `replace` plugins taking the place of the base's plugin of the same name), then `plugins`.
 */
export interface Preset {
  name: string;
  description?: string;
  /** A preset to start from: a built-in's name (`default`, `headless`, `minimal`, `policy-strict`), a package name or a preset object. */
  extends?: string | Preset;
  /** Plugins applied in this order (after the base's, when extending). */
  plugins: Plugin[];
  /** Names of the base preset's plugins to leave out. */
  disable?: string[];
  /** Plugins that replace the base preset's plugin of the same name, in its place. */
  replace?: Plugin[];
}

export interface PermissionRules {
  allow?: string[];
  ask?: string[];
  deny?: string[];
}

export interface McpServerConfig {
  type?: 'stdio' | 'http' | 'sse';
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** Milliseconds a tool call may take (reset by progress notifications). */
  timeout?: number;
  /** OAuth for a remote server that asks for it (the authorization-code flow with a loopback redirect). */
  oauth?: { clientId?: string; clientSecret?: string; scope?: string; callbackPort?: number };
}

/** An entry of a config's `plugins`: a plugin, or a package by name with its factory's options. */
export type PluginEntry = Plugin | string | [name: string, options?: unknown];

/**
 * `agent.config.ts`. Plugins that own more keys augment this interface:
 * `declare module 'keel' { interface KeelConfig { sandbox?: SandboxConfig } }`.
 */
export interface KeelConfig {
  /** A preset by name (a built-in such as `default`, else a package such as `keel-preset-x`) or a preset object. */
  preset?: string | Preset;
  /**
   * Plugins added after the preset's: plugin objects, or packages by name (`'keel-plugin-x'`, or
   * `['keel-plugin-x', options]` to call its factory with options).
   */
  plugins?: PluginEntry[];
  /** Plugin names to leave out of the preset. */
  disable?: string[];
  model?: string;
  smallModel?: string;
  permissionMode?: PermissionMode | 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan';
  maxTurns?: number;
  maxTokens?: number;
  mcpServers?: Record<string, McpServerConfig>;
  permissions?: PermissionRules;
  provider?: string;
  baseURL?: string;
  apiKey?: string;
  thinking?: { budget_tokens: number };
  contextWindow?: number;
  /** The only tools this agent has (Keel's or Claude Code's names); unset = every registered tool. */
  tools?: string[];
  /** The interactive frontend: `ink` (default) or `plain`. */
  ui?: string;
}

/** Identity helper that types a plugin factory. */
export function definePlugin<F extends (...args: any[]) => Plugin>(factory: F): F {
  return factory;
}

/** Types a preset; `plugins` may be left out when it `extends` another. */
export function definePreset(preset: Omit<Preset, 'plugins'> & { plugins?: Plugin[] }): Preset {
  return { ...preset, plugins: preset.plugins ?? [] };
}

export function defineConfig(config: KeelConfig): KeelConfig {
  return config;
}

export function defineTool<I>(tool: ToolDefinition<I>): ToolDefinition<I> {
  return tool;
}

export function isPlugin(value: unknown): value is Plugin {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Partial<Plugin>;
  return typeof p.name === 'string' && typeof p.apply === 'function' && typeof p.kernel === 'string';
}
