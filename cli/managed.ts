/**
 * Managed settings: JSON files an administrator installs (`/etc/keel/managed-settings.json`, Claude Code's
 * `/etc/claude-code/managed-settings.json`) in Claude Code's settings shape. They are the highest config layer,
 * and what they pin cannot be loosened by any other layer, flag, plugin, SDK host or sub-agent. A file that is
 * not valid (bad JSON, a wrong type, an unknown key) stops Keel: policy that cannot be read is never skipped.
 *
 * `KEEL_MANAGED_SETTINGS_DIR` names one more folder whose `managed-settings.json` is read (for tests). It only
 * adds a file, below the system ones: the system files are always read, so the variable cannot remove or weaken
 * them, only add restrictions of its own. A project cannot set Keel's environment in any case.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z, type ZodType } from 'zod';
import { KeelError, errorMessage } from '../kernel/errors.js';
import type { ConfigLayer, ManagedPolicy, McpServerMatcher } from '../kernel/resolved-config.js';
import { MODE_ALIASES, normalizePermissionMode } from '../kernel/resolved-config.js';

export const MANAGED_DIR_ENV = 'KEEL_MANAGED_SETTINGS_DIR';
const FILE_NAME = 'managed-settings.json';

/** The system's managed files, lowest precedence first (Keel's own wins over Claude Code's). */
export function systemManagedFiles(platform: NodeJS.Platform = process.platform): string[] {
  if (platform === 'darwin') return ['/Library/Application Support/ClaudeCode', '/Library/Application Support/Keel'].map((dir) => path.join(dir, FILE_NAME));
  return ['/etc/claude-code', '/etc/keel'].map((dir) => path.join(dir, FILE_NAME));
}

/** Every managed file Keel reads, lowest precedence first: the test folder's (if named), then the system's. */
export function managedFiles(env: NodeJS.ProcessEnv): string[] {
  const dir = env[MANAGED_DIR_ENV];
  if (!dir) return systemManagedFiles();
  const folder = path.resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(folder).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new KeelError(`${MANAGED_DIR_ENV}: not a folder: ${folder}`, { code: 'config', exitCode: 2 });
  return [path.join(folder, FILE_NAME), ...systemManagedFiles()];
}

const matcherSchema = z
  .object({
    serverName: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, "_" and "-" only'),
    serverCommand: z.array(z.string()).min(1),
    serverUrl: z.string().min(1),
  })
  .partial()
  .strict()
  .refine((m) => Object.keys(m).length === 1, { message: 'set exactly one of serverName, serverCommand, serverUrl' });

const rules = z.array(z.string().min(1));
const disable = z.literal('disable', { message: 'must be "disable"' });

/** The keys a managed file may hold, with Claude Code's names and meanings. */
const MANAGED_SHAPE: Record<string, ZodType> = {
  permissions: z
    .object({
      allow: rules,
      ask: rules,
      deny: rules,
      defaultMode: z.string().refine((v) => normalizePermissionMode(v) !== undefined, { message: `must be one of ${Object.keys(MODE_ALIASES).join(', ')}` }),
      disableBypassPermissionsMode: disable,
    })
    .partial()
    .strict(),
  // Also accepted at the top level, where some of Claude Code's documentation shows it.
  disableBypassPermissionsMode: disable,
  model: z.string().min(1),
  env: z.record(z.string(), z.string()),
  // Checked fully by user-hooks's schema with the other layers (the error still names this file).
  hooks: z.record(z.string(), z.unknown()),
  allowManagedHooksOnly: z.boolean(),
  allowedMcpServers: z.array(matcherSchema),
  deniedMcpServers: z.array(matcherSchema),
};

export interface ManagedFile {
  file: string;
  values: Record<string, unknown>;
}

/** Reads and checks one managed file; undefined when it does not exist. */
export function readManagedFile(file: string): ManagedFile | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fail(file, `cannot be read (${errorMessage(err)})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw fail(file, `not valid JSON (${errorMessage(err)})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw fail(file, 'must hold a JSON object of settings');
  const problems: string[] = [];
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    const schema = MANAGED_SHAPE[key];
    if (!schema) {
      problems.push(`${key}: unknown key (known keys: ${Object.keys(MANAGED_SHAPE).join(', ')})`);
      continue;
    }
    const result = schema.safeParse(value);
    if (!result.success) for (const issue of result.error.issues) problems.push(`${[key, ...issue.path.map(String)].join('.')}: ${issue.message}`);
  }
  if (problems.length) throw fail(file, problems.join('; '));
  return { file, values: parsed as Record<string, unknown> };
}

function fail(file: string, why: string): KeelError {
  return new KeelError(`${file}: managed settings: ${why}; Keel does not start until this file is fixed`, { code: 'config', exitCode: 2 });
}

/** A managed file as a config layer: the values Keel's other layers also have. */
function layerOf({ file, values }: ManagedFile): ConfigLayer {
  const out: Record<string, unknown> = {};
  const permissions = values.permissions as { allow?: string[]; ask?: string[]; deny?: string[]; defaultMode?: string } | undefined;
  if (permissions) {
    const { allow, ask, deny } = permissions;
    if (allow || ask || deny) out.permissions = { allow: allow ?? [], ask: ask ?? [], deny: deny ?? [] };
    if (permissions.defaultMode !== undefined) out.permissionMode = permissions.defaultMode;
  }
  for (const key of ['model', 'env', 'hooks'] as const) if (values[key] !== undefined) out[key] = values[key];
  return { kind: 'managed', source: file, values: out };
}

export interface Managed {
  layers: ConfigLayer[];
  policy: ManagedPolicy;
}

/** Reads every managed file; undefined when there is none. Throws (naming the file and key) on a bad one. */
export function loadManaged(env: NodeJS.ProcessEnv): Managed | undefined {
  const found = managedFiles(env).map(readManagedFile).filter((f): f is ManagedFile => f !== undefined);
  if (found.length === 0) return undefined;
  const policy: ManagedPolicy = { files: found.map((f) => f.file), allowedMcpServers: [], deniedMcpServers: [] };
  for (const { file, values } of found) {
    const permissions = values.permissions as { disableBypassPermissionsMode?: string } | undefined;
    if (permissions?.disableBypassPermissionsMode === 'disable' || values.disableBypassPermissionsMode === 'disable') policy.disableBypassPermissionsMode = file;
    if (values.allowManagedHooksOnly === true) policy.allowManagedHooksOnly = file;
    if (values.allowedMcpServers) policy.allowedMcpServers.push({ file, servers: values.allowedMcpServers as McpServerMatcher[] });
    if (values.deniedMcpServers) policy.deniedMcpServers.push({ file, servers: values.deniedMcpServers as McpServerMatcher[] });
    if (typeof values.model === 'string') policy.model = { value: values.model, file };
  }
  return { layers: found.map(layerOf), policy };
}

/**
 * Applies what the managed policy takes away from the other layers (in place, before they merge): hooks from
 * anywhere but managed files under `allowManagedHooksOnly`. Returns a warning per dropped setting.
 */
export function restrictLayers(layers: ConfigLayer[], policy: ManagedPolicy): string[] {
  const warnings: string[] = [];
  if (!policy.allowManagedHooksOnly) return warnings;
  const managedHooks = [...layers].reverse().find((l) => l.kind === 'managed' && l.values.hooks !== undefined)?.values.hooks;
  for (const layer of layers) {
    if (layer.kind === 'managed' || layer.values.hooks === undefined) continue;
    const { hooks, ...rest } = layer.values;
    layer.values = rest;
    // A sub-agent's handoff carries the parent's hooks, which are the managed ones: nothing to warn about.
    if (isDeepStrictEqual(hooks, managedHooks)) continue;
    warnings.push(`${layer.labels?.hooks ?? `${layer.source}: hooks`} ignored: managed settings allow only managed hooks (allowManagedHooksOnly in ${policy.allowManagedHooksOnly})`);
  }
  return warnings;
}

/** Managed permission policy needs the plugin that enforces it: the refusal when it is left out, or undefined. */
export function missingEnforcer(layers: ConfigLayer[], policy: ManagedPolicy, pluginNames: string[]): string | undefined {
  const managedRules = layers.some((l) => l.kind === 'managed' && l.values.permissions !== undefined);
  if ((managedRules || policy.disableBypassPermissionsMode) && !pluginNames.includes('permissions')) {
    return `managed settings (${policy.files.join(', ')}) set permission policy, which needs the permissions plugin; this configuration does not load it`;
  }
  return undefined;
}

/** The one-line refusal for a setting that would loosen the managed policy, or undefined. */
export function managedRefusal(layers: ConfigLayer[], merged: { permissionMode: string }, policy: ManagedPolicy, pluginNames: string[]): string | undefined {
  const missing = missingEnforcer(layers, policy, pluginNames);
  if (missing) return missing;
  if (policy.disableBypassPermissionsMode && merged.permissionMode === 'auto') {
    const layer = [...layers].reverse().find((l) => l.values.permissionMode !== undefined);
    const label = layer ? (layer.labels?.permissionMode ?? `${layer.source}: permissionMode`) : 'permissionMode';
    const value = layer ? String(layer.values.permissionMode) : 'auto';
    return `${label}: the ${value === 'auto' ? 'auto (bypassPermissions)' : `${value} (auto)`} permission mode is disabled by managed settings (disableBypassPermissionsMode in ${policy.disableBypassPermissionsMode})`;
  }
  return undefined;
}

/** The managed `env` applied to the process environment, so every part that reads variables (telemetry) sees it. */
export function applyManagedEnv(managed: Managed, env: NodeJS.ProcessEnv): void {
  for (const layer of managed.layers) {
    const vars = layer.values.env as Record<string, string> | undefined;
    if (vars) Object.assign(env, vars);
  }
}
