import type { Preset } from '../kernel/index.js';

/** Presets by name, each loaded only when asked for. */
const loaders: Record<string, () => Promise<{ default: Preset }>> = {
  default: () => import('./default.js'),
  headless: () => import('./headless.js'),
  minimal: () => import('./minimal.js'),
};

export const PRESET_NAMES = Object.keys(loaders);

export async function loadPreset(name: string): Promise<Preset | undefined> {
  const load = loaders[name];
  return load ? (await load()).default : undefined;
}
