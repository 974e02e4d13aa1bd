/**
 * The in-process kernel of `query()`: built from the options alone — a preset (by name or object), extra
 * plugins and config keys — validated like a config file; no config files are searched.
 */
import { createKernel, KeelError, type Kernel } from '../kernel/index.js';
import { findProjectRoot, keelHome, mergeLayers, validateLayer, type ConfigLayer } from '../cli/config.js';
import { loadPreset, PRESET_NAMES } from '../presets/index.js';
import type { QueryOptions } from './types.js';

export async function buildKernel(options: QueryOptions, cwd: string, env: NodeJS.ProcessEnv): Promise<Kernel> {
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
  const base = { cwd, projectRoot: findProjectRoot(cwd), keelHome: keelHome(env) };
  const draft = mergeLayers([layer], base);
  const preset = typeof draft.preset === 'string' ? await loadPreset(draft.preset) : draft.preset;
  if (!preset) throw new KeelError(`query() options: unknown preset "${String(draft.preset)}" (known presets: ${PRESET_NAMES.join(', ')})`);
  const disabled = new Set(draft.disable);
  const plugins = [...preset.plugins.filter((p) => !disabled.has(p.name)), ...draft.plugins];
  validateLayer(layer, Object.assign({}, ...plugins.map((p) => p.config ?? {})));
  const config = { ...draft, preset, trusted: false };
  if (!config.apiKey && env.ANTHROPIC_API_KEY) config.apiKey = env.ANTHROPIC_API_KEY;
  if (!config.baseURL && env.ANTHROPIC_BASE_URL) config.baseURL = env.ANTHROPIC_BASE_URL;
  const kernel = createKernel({ config });
  for (const plugin of plugins) kernel.use(plugin);
  return kernel.seal();
}
