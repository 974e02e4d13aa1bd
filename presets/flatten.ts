/**
 * Preset composition: a preset may extend another (by name or object), leave out some of its plugins and put
 * others in their place, then add its own. `flattenPreset` turns that into the plain ordered list the kernel
 * applies, with errors that name the preset and the plugin at fault.
 */
import { KeelError, type Plugin, type Preset } from '../kernel/index.js';

export type PresetLoader = (name: string) => Promise<Preset | undefined>;

export async function flattenPreset(preset: Preset, load: PresetLoader, known: readonly string[], chain: string[] = []): Promise<Preset> {
  if (chain.includes(preset.name)) throw new KeelError(`preset "${preset.name}" extends itself (${[...chain, preset.name].join(' → ')})`, { exitCode: 2 });
  if (preset.extends === undefined) return { name: preset.name, description: preset.description, plugins: preset.plugins };
  let base: Preset | undefined;
  if (typeof preset.extends === 'string') {
    base = await load(preset.extends);
    if (!base) throw new KeelError(`preset "${preset.name}" extends "${preset.extends}", which is not a preset (known presets: ${known.join(', ')})`, { exitCode: 2 });
  } else base = preset.extends;
  const flat = await flattenPreset(base, load, known, [...chain, preset.name]);
  const names = new Set(flat.plugins.map((p) => p.name));
  const missing = (name: string, what: string) =>
    new KeelError(`preset "${preset.name}": ${what} "${name}", but preset "${flat.name}" has no plugin of that name (its plugins: ${[...names].join(', ')})`, { exitCode: 2 });
  for (const name of preset.disable ?? []) if (!names.has(name)) throw missing(name, 'disable names');
  for (const plugin of preset.replace ?? []) if (!names.has(plugin.name)) throw missing(plugin.name, 'replace names');
  const disabled = new Set(preset.disable ?? []);
  const replacements = new Map((preset.replace ?? []).map((p) => [p.name, p] as const));
  const plugins: Plugin[] = flat.plugins.filter((p) => !disabled.has(p.name)).map((p) => replacements.get(p.name) ?? p);
  return { name: preset.name, description: preset.description ?? flat.description, plugins: [...plugins, ...preset.plugins] };
}
