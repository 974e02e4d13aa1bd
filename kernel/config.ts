/**
 * Configuration: layers found on disk and in the environment, validated one by one (so an error names its
 * file), then merged key by key. Precedence, highest first: flags → env → project → user → defaults.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { z, type ZodType } from 'zod';
import { KeelError } from './errors.js';
import { isPlugin, type KeelConfig, type McpServerConfig, type PermissionRules, type Plugin, type Preset } from './plugin.js';
import type { PermissionMode } from './types.js';

export type LayerKind = 'defaults' | 'user' | 'project' | 'env' | 'flags';

/** One source of settings: a file, the environment or the command line. */
export interface ConfigLayer {
  kind: LayerKind;
  /** A file path, or `env` / `flags`. Named in every error about this layer. */
  source: string;
  values: Record<string, unknown>;
  /** How to name a key of this layer in errors, e.g. `--permission-mode` or `KEEL_MODEL`. */
  labels?: Record<string, string>;
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
  cwd: string;
  projectRoot: string;
  keelHome: string;
  /** False when the project folder is not trusted: its code, MCP servers and hooks must not run. */
  trusted?: boolean;
  /** The project settings files left unloaded because the folder is not trusted. */
  untrustedFiles?: string[];
  /** Which layer set each top-level key, for messages such as "model (from ./agent.config.ts)". */
  sources: Record<string, string>;
  /** Plugin-owned keys that no core field describes, by key. */
  extra: Record<string, unknown>;
  [key: string]: unknown;
};

const MODE_ALIASES: Record<string, PermissionMode> = {
  auto: 'auto',
  edits: 'edits',
  ask: 'ask',
  manual: 'manual',
  default: 'ask',
  acceptEdits: 'edits',
  bypassPermissions: 'auto',
};

export function normalizePermissionMode(value: string): PermissionMode | undefined {
  return MODE_ALIASES[value];
}

const permissionModeSchema = z.string().refine((v) => normalizePermissionMode(v) !== undefined, {
  message: `must be one of ${Object.keys(MODE_ALIASES).join(', ')}`,
});

const pluginSchema = z.custom<Plugin>(isPlugin, { message: 'must be a plugin object { name, kernel, apply } (did you forget to call the factory?)' });
const presetSchema: ZodType = z.lazy(() =>
  z.object({
    name: z.string(),
    description: z.string().optional(),
    extends: z.union([z.string(), presetSchema]).optional(),
    plugins: z.array(pluginSchema),
    disable: z.array(z.string()).optional(),
    replace: z.array(pluginSchema).optional(),
  }),
);

const mcpServerSchema = z
  .object({
    type: z.enum(['stdio', 'http', 'sse']).optional(),
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    url: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict()
  .refine((s) => s.command !== undefined || s.url !== undefined, { message: 'needs a command (stdio) or a url (http)' });

/** The keys the kernel itself knows; plugins add theirs through `Plugin.config`. */
export const coreConfigShape = {
  preset: z.union([z.string(), presetSchema]),
  plugins: z.array(pluginSchema),
  disable: z.array(z.string()),
  model: z.string().min(1),
  smallModel: z.string().min(1),
  permissionMode: permissionModeSchema,
  maxTurns: z.number().int().positive(),
  maxTokens: z.number().int().positive(),
  mcpServers: z.record(z.string(), mcpServerSchema),
  permissions: z
    .object({ allow: z.array(z.string()), ask: z.array(z.string()), deny: z.array(z.string()) })
    .partial()
    .strict(),
  provider: z.string(),
  baseURL: z.string(),
  apiKey: z.string(),
  thinking: z.object({ budget_tokens: z.number().int().positive() }).strict(),
  contextWindow: z.number().int().positive(),
  ui: z.string().min(1),
} satisfies Record<string, ZodType>;

export const DEFAULTS = {
  model: 'claude-sonnet-5-5',
  smallModel: 'claude-haiku-5-5',
  permissionMode: 'ask' as PermissionMode,
  maxTurns: 100,
  maxTokens: 16384,
  preset: 'default',
};

function configError(layer: ConfigLayer, key: string, message: string): KeelError {
  const top = key.split('.')[0];
  const where = layer.labels?.[top] ? `${layer.labels[top]}${key.slice(top.length)}` : `${layer.source}: ${key}`;
  return new KeelError(`${where}: ${message}`, { code: 'config', exitCode: 2 });
}

/**
 * Validates one layer against the core keys plus the plugin-owned keys. Unknown keys are an error unless
 * `allowUnknown` (the first pass, before the plugins that own them are known).
 */
export function validateLayer(
  layer: ConfigLayer,
  pluginShapes: Record<string, ZodType> = {},
  allowUnknown = false,
): void {
  if (typeof layer.values !== 'object' || layer.values === null || Array.isArray(layer.values)) {
    throw new KeelError(`${layer.source}: the config must be an object (export default defineConfig({...}))`, { code: 'config', exitCode: 2 });
  }
  const shapes: Record<string, ZodType> = { ...coreConfigShape, ...pluginShapes };
  for (const [key, value] of Object.entries(layer.values)) {
    const schema = shapes[key];
    if (!schema) {
      if (allowUnknown) continue;
      throw configError(layer, key, `unknown key (known keys: ${Object.keys(shapes).sort().join(', ')})`);
    }
    if (value === undefined) continue;
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = [key, ...(issue?.path ?? []).map(String)].join('.');
      throw configError(layer, where, issue?.message ?? 'invalid value');
    }
  }
}

const MERGED_ARRAYS = new Set(['plugins', 'disable']);

/** Merges layers (lowest precedence first) key by key; `permissions`, `mcpServers`, `env`, `plugins`, `disable` accumulate. */
export function mergeLayers(layers: ConfigLayer[], base: { cwd: string; projectRoot: string; keelHome: string }): ResolvedConfig {
  const merged: Record<string, unknown> = { ...DEFAULTS };
  const sources: Record<string, string> = {};
  const permissions: Required<PermissionRules> = { allow: [], ask: [], deny: [] };
  const mcpServers: Record<string, McpServerConfig> = {};
  let plugins: Plugin[] = [];
  let disable: string[] = [];
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer.values)) {
      if (value === undefined) continue;
      sources[key] = layer.source;
      if (key === 'permissions') {
        const rules = value as PermissionRules;
        permissions.allow.push(...(rules.allow ?? []));
        permissions.ask.push(...(rules.ask ?? []));
        permissions.deny.push(...(rules.deny ?? []));
      } else if (key === 'mcpServers') {
        Object.assign(mcpServers, value);
      } else if (key === 'env' && typeof value === 'object' && value !== null) {
        // Environment variables for the commands Keel runs merge name by name, like servers.
        merged.env = { ...((merged.env as Record<string, string> | undefined) ?? {}), ...(value as Record<string, string>) };
      } else if (MERGED_ARRAYS.has(key)) {
        if (key === 'plugins') plugins = [...plugins, ...(value as Plugin[])];
        else disable = [...disable, ...(value as string[])];
      } else {
        merged[key] = value;
      }
    }
  }
  const extra: Record<string, unknown> = {};
  for (const key of Object.keys(merged)) if (!(key in coreConfigShape) && !(key in DEFAULTS)) extra[key] = merged[key];
  return {
    ...(merged as Record<string, unknown>),
    model: merged.model as string,
    smallModel: merged.smallModel as string,
    permissionMode: normalizePermissionMode(String(merged.permissionMode)) ?? 'ask',
    maxTurns: merged.maxTurns as number,
    maxTokens: merged.maxTokens as number,
    preset: merged.preset as string | Preset,
    plugins,
    disable,
    permissions,
    mcpServers,
    cwd: base.cwd,
    projectRoot: base.projectRoot,
    keelHome: base.keelHome,
    sources,
    extra,
  };
}

/** Settings read from the environment. */
const ENV_KEYS: Array<[key: string, names: string[], parse?: (v: string) => unknown]> = [
  ['model', ['KEEL_MODEL', 'ANTHROPIC_MODEL']],
  ['smallModel', ['KEEL_SMALL_MODEL', 'ANTHROPIC_SMALL_FAST_MODEL']],
  ['permissionMode', ['KEEL_PERMISSION_MODE']],
  ['preset', ['KEEL_PRESET']],
  ['maxTurns', ['KEEL_MAX_TURNS'], (v) => (/^\d+$/.test(v) ? Number(v) : v)],
];

export function envLayer(env: NodeJS.ProcessEnv): ConfigLayer {
  const values: Record<string, unknown> = {};
  const labels: Record<string, string> = {};
  for (const [key, names, parse] of ENV_KEYS) {
    const name = names.find((n) => env[n]);
    if (!name) continue;
    values[key] = parse ? parse(env[name]!) : env[name];
    labels[key] = name;
  }
  return { kind: 'env', source: 'env', values, labels };
}

export function keelHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.KEEL_HOME ? path.resolve(env.KEEL_HOME) : path.join(homedir(), '.keel');
}

/** The nearest ancestor holding `.git`, else `cwd` itself. */
export function findProjectRoot(cwd: string): string {
  let dir = path.resolve(cwd);
  for (;;) {
    if (existsSync(path.join(dir, '.git'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(cwd);
    dir = parent;
  }
}

export const CONFIG_FILES = [
  'agent.config.ts',
  'agent.config.mts',
  'agent.config.js',
  'agent.config.mjs',
  'agent.config.cjs',
  'agent.config.json',
];

export interface ConfigFileLoader {
  /** Loads a config module (TypeScript through jiti). Throws a KeelError naming the file on failure. */
  (file: string): Promise<Record<string, unknown>>;
}

/** Finds `agent.config.*` from `cwd` up to `projectRoot`, or loads `explicit` (`--config`). */
export async function findProjectConfig(cwd: string, projectRoot: string, explicit?: string): Promise<string | undefined> {
  if (explicit) {
    const file = path.resolve(cwd, explicit);
    if (!existsSync(file) || !statSync(file).isFile()) {
      throw new KeelError(`--config: no such file: ${file}`, { code: 'config', exitCode: 2 });
    }
    return file;
  }
  const { cosmiconfig } = await import('cosmiconfig');
  const explorer = cosmiconfig('keel', {
    searchPlaces: CONFIG_FILES,
    searchStrategy: 'global',
    stopDir: projectRoot,
    cache: false,
    // Loading happens through our loader; cosmiconfig only finds the file.
    loaders: Object.fromEntries(['.ts', '.mts', '.js', '.mjs', '.cjs', '.json', 'noExt'].map((ext) => [ext, () => ({})])),
  });
  const found = await explorer.search(cwd);
  return found?.filepath;
}

/** The user's config in `$KEEL_HOME`, if any. */
export function findUserConfig(home: string): string | undefined {
  for (const name of CONFIG_FILES) {
    const file = path.join(home, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}
