/**
 * The in-process kernel of `query()`: built from the options alone — a preset (by name or object), extra
 * plugins and config keys — validated like a config file; no config files are searched.
 */
import { createKernel, KeelError, type Kernel, type Plugin } from '../kernel/index.js';
import { findProjectRoot, inertKeys, keelHome, mergeLayers, validateLayer, type ConfigLayer } from '../cli/config.js';
import { loadPreset, PRESET_NAMES } from '../presets/index.js';
import type { QueryOptions } from './types.js';
import { applyManagedEnv, loadManaged, managedRefusal, restrictLayers } from '../cli/managed.js';
import managedSettings from '../plugins/managed-settings/index.js';

export async function buildKernel(options: QueryOptions, cwd: string, env: NodeJS.ProcessEnv): Promise<Kernel> {
  // A host's options rank below managed settings, as flags do (see cli/managed.ts).
  const managed = loadManaged(env);
  // The host's own environment object is left alone; the kernel's copy carries the managed variables.
  if (managed) applyManagedEnv(managed, (env = { ...env }));
  const values: Record<string, unknown> = { ...options.config };
  if (options.preset !== undefined) values.preset = options.preset;
  if (options.plugins) values.plugins = [...((values.plugins as unknown[]) ?? []), ...options.plugins];
  if (options.model !== undefined) values.model = options.model;
  if (options.permissionMode !== undefined) values.permissionMode = options.permissionMode;
  if (options.maxTurns !== undefined) values.maxTurns = options.maxTurns;
  if (options.tools !== undefined) values.tools = options.tools;
  if (options.maxBudgetUsd !== undefined) values.maxBudgetUsd = options.maxBudgetUsd;
  if (options.fallbackModel !== undefined) values.fallbackModel = options.fallbackModel;
  if (options.outputFormat !== undefined) values.jsonSchema = options.outputFormat.schema;
  if (options.allowedTools?.length || options.disallowedTools?.length) {
    const rules = (values.permissions ?? {}) as { allow?: string[]; ask?: string[]; deny?: string[] };
    values.permissions = { ...rules, allow: [...(rules.allow ?? []), ...(options.allowedTools ?? [])], deny: [...(rules.deny ?? []), ...(options.disallowedTools ?? [])] };
  }
  const layer: ConfigLayer = { kind: 'flags', source: 'query() options', values };
  validateLayer(layer, {}, true);
  const layers = [layer, ...(managed?.layers ?? [])];
  const warnings = managed ? restrictLayers(layers, managed.policy) : [];
  for (const warning of warnings) process.emitWarning(warning, { code: 'KEEL_MANAGED' });
  const base = { cwd, projectRoot: findProjectRoot(cwd), keelHome: keelHome(env) };
  const draft = mergeLayers(layers, base);
  const preset = typeof draft.preset === 'string' ? await loadPreset(draft.preset) : draft.preset;
  if (!preset) throw new KeelError(`query() options: unknown preset "${String(draft.preset)}" (known presets: ${PRESET_NAMES.join(', ')})`);
  const disabled = new Set(draft.disable);
  const plugins = [...preset.plugins.filter((p) => !disabled.has(p.name)), ...draft.plugins, ...(managed ? [managedSettings() as Plugin] : [])];
  // A managed key whose plugin this preset lacks (hooks without user-hooks) has no effect, as in the CLI.
  const inert = managed ? inertKeys(managed.layers, plugins.map((p) => p.name)).shapes : {};
  for (const each of layers) validateLayer(each, Object.assign({}, inert, ...plugins.map((p) => p.config ?? {})));
  const config = { ...draft, preset, trusted: false, ...(managed ? { managed: managed.policy } : {}) };
  const refusal = managed && managedRefusal(layers, config, managed.policy, plugins.map((p) => p.name));
  if (refusal) throw new KeelError(refusal);
  if (!config.apiKey && env.ANTHROPIC_API_KEY) config.apiKey = env.ANTHROPIC_API_KEY;
  if (!config.baseURL && env.ANTHROPIC_BASE_URL) config.baseURL = env.ANTHROPIC_BASE_URL;
  const kernel = createKernel({ config });
  for (const plugin of plugins) kernel.use(plugin);
  return kernel.seal();
}
