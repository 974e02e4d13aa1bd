/**
 * Configuration: layers found on disk and in the environment, validated one by one (so an error names its
 * file), then merged key by key. Precedence, highest first: flags → env → project → user → defaults.
 */
import { didYouMean, nearNames } from './suggest.js';
import { z, type ZodType } from 'zod';
import { KeelError } from '../kernel/errors.js';
import { checkKernelRange, isPlugin, KERNEL_VERSION, type McpServerConfig, type PermissionRules, type Plugin, type Preset } from '../kernel/plugin.js';
import { DEFAULTS, MODE_ALIASES, normalizePermissionMode, type ConfigLayer, type ResolvedConfig } from '../kernel/resolved-config.js';

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
    timeout: z.number().int().positive().optional(),
    oauth: z
      .object({ clientId: z.string().optional(), clientSecret: z.string().optional(), scope: z.string().optional(), callbackPort: z.number().int().min(0).max(65535).optional() })
      .strict()
      .optional(),
  })
  .strict()
  .refine((s) => s.command !== undefined || s.url !== undefined, { message: 'needs a command (stdio) or a url (http)' })
  .refine((s) => !(s.type === 'http' || s.type === 'sse') || s.url !== undefined, { message: 'type http and sse need a url' });

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
  tools: z.array(z.string()),
  ui: z.string().min(1),
} satisfies Record<string, ZodType>;

/**
 * What is wrong with one entry of `plugins` (or a preset's plugins), or undefined when it is a plugin. Names,
 * kernel ranges and missing fields are checked here, so the error names the config file and the entry.
 */
export function pluginProblem(value: unknown): string | undefined {
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}, not a plugin: did you forget to call the plugin factory?`;
  if (typeof value !== 'object' || value === null) return `expected a plugin object { name, kernel, apply }, got ${value === null ? 'null' : typeof value}`;
  const p = value as Record<string, unknown>;
  const missing = (['name', 'kernel', 'apply'] as const).filter((field) => p[field] === undefined);
  if (missing.length) return `missing ${missing.map((f) => `"${f}"`).join(', ')} (a plugin is { name, kernel, apply }${missing.includes('kernel') ? `; kernel is a semver range such as "^${KERNEL_VERSION.split('.')[0]}.0.0"` : ''})`;
  if (typeof p.name !== 'string') return `"name" must be a string`;
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(p.name)) return `name "${p.name}" must be kebab-case (lowercase letters, digits and "-")`;
  if (typeof p.apply !== 'function') return `"apply" must be a function`;
  const range = typeof p.kernel === 'string' ? checkKernelRange(p.kernel) : 'invalid';
  if (range === 'invalid') return `kernel range ${JSON.stringify(p.kernel)} is not a valid semver range`;
  if (range === 'unsatisfied') return `needs kernel ${p.kernel}, but this kernel is ${KERNEL_VERSION}`;
  return undefined;
}

/** The keys read before the preset's plugins are known. */
const ASSEMBLY_KEYS = new Set(['preset', 'plugins', 'disable']);

function pluginProblems(list: unknown[], at: string): string[] {
  const problems: string[] = [];
  list.forEach((entry, index) => {
    const problem = pluginProblem(entry);
    if (!problem) return;
    const name = typeof entry === 'object' && entry !== null && typeof (entry as { name?: unknown }).name === 'string' ? ` (${(entry as { name: string }).name})` : '';
    problems.push(`${at}.${index}${name}: ${problem}`);
  });
  return problems;
}

/**
 * Validates one layer against the core keys plus the plugin-owned keys, and reports every problem at once (one
 * line, `; `-separated). Unknown keys are an error unless `allowUnknown` (the first pass, before the plugins that
 * own them are known).
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
  const problems: string[] = [];
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(layer.values)) {
    // The first pass checks only what assembling needs; the second reports every problem at once.
    if (allowUnknown && !ASSEMBLY_KEYS.has(key)) continue;
    const schema = shapes[key];
    if (!schema) {
      if (!allowUnknown) unknown.push(key);
      continue;
    }
    if (value === undefined) continue;
    if (key === 'plugins' && Array.isArray(value)) {
      problems.push(...pluginProblems(value, 'plugins'));
      continue;
    }
    if (key === 'preset' && typeof value === 'object' && value !== null && Array.isArray((value as Preset).plugins)) {
      problems.push(...pluginProblems((value as Preset).plugins, 'preset.plugins'));
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) continue;
    for (const issue of parsed.error.issues) {
      const path = [key, ...issue.path.map(String)].join('.');
      if (!problems.some((p) => p.startsWith(`${path}: `) || p.startsWith(`${path} (`))) problems.push(`${path}: ${issue.message}`);
    }
  }
  if (unknown.length) {
    const known = `known keys: ${Object.keys(shapes).sort().join(', ')}`;
    problems.push(...unknown.map((key) => `${key}: unknown key${didYouMean(nearNames(key, Object.keys(shapes)))}`));
    problems[problems.length - 1] += ` (${known})`;
  }
  if (problems.length === 0) return;
  // A flag or an environment variable is named by itself (`--max-turns: …`); a file prefixes its path once.
  const label = (problem: string) => {
    const top = problem.split(/[.: ]/)[0]!;
    return layer.labels?.[top] ? `${layer.labels[top]}${problem.slice(top.length)}` : undefined;
  };
  const text = problems.map((problem) => label(problem) ?? problem).join('; ');
  throw new KeelError(problems.every(label) ? text : `${layer.source}: ${text}`, { code: 'config', exitCode: 2 });
}

/**
 * Config keys that a plugin reads, by that plugin's name. A key whose plugin is not loaded has no effect: Keel
 * warns instead of ignoring it silently (or calling it unknown). Plugins outside this table own their keys
 * through `Plugin.config` alone.
 */
export const PLUGIN_OWNED_KEYS: Record<string, string> = {
  mcpServers: 'mcp-bridge',
  permissions: 'permissions',
  retry: 'query-retry',
  openai: 'query-openai',
  pricing: 'usage',
  sessions: 'session-store',
  sandbox: 'sandbox',
  autoCompact: 'compact-auto',
  hooks: 'user-hooks',
  env: 'claude-settings',
  goal: 'goal',
  goalCheck: 'goal',
  fallbackModel: 'model-fallback',
  agents: 'tool-agent',
};

/** Limits a run must not go without: set while their plugin is not loaded, they stop Keel instead of a warning. */
const ENFORCED_KEYS: Record<string, string> = {
  maxBudgetUsd: 'budget',
  jsonSchema: 'structured-output',
  structuredOutputRetries: 'structured-output',
};

/**
 * Keys set in `layers` whose owning plugin is not among `loaded`: a warning for each, and a permissive shape so
 * the final validation does not call them unknown.
 */
export function inertKeys(layers: ConfigLayer[], loaded: string[]): { warnings: string[]; shapes: Record<string, ZodType> } {
  const warnings: string[] = [];
  const shapes: Record<string, ZodType> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer.values)) {
      const enforcer = ENFORCED_KEYS[key];
      if (enforcer && value !== undefined && !loaded.includes(enforcer)) {
        const name = layer.labels?.[key] ?? `${layer.source}: ${key}`;
        throw new KeelError(`${name} cannot be enforced: the plugin that enforces it (${enforcer}) is not loaded; add it to \`plugins\` or pick a preset that has it (default, headless)`, { code: 'config', exitCode: 2 });
      }
      const owner = PLUGIN_OWNED_KEYS[key];
      if (!owner || value === undefined || loaded.includes(owner)) continue;
      const name = layer.labels?.[key] ?? `${layer.source}: ${key}`;
      warnings.push(`${name} has no effect: the plugin that uses it (${owner}) is not loaded; add it to \`plugins\` or pick a preset that has it`);
      if (!(key in coreConfigShape)) shapes[key] = z.unknown();
    }
  }
  return { warnings, shapes };
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
        // Which layer set each server, so project servers can be told apart (e.g. `mcpServers.docs`).
        for (const name of Object.keys(value as object)) sources[`mcpServers.${name}`] = layer.source;
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

export type { ConfigLayer, ResolvedConfig };
export { CONFIG_FILES, findProjectConfig, findProjectRoot, findUserConfig, isFile, keelHome } from './config-files.js';
