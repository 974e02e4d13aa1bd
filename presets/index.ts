import { flattenPreset, type Preset } from '../kernel/index.js';

/** Presets by name, each loaded only when asked for. */
const loaders: Record<string, () => Promise<{ default: Preset }>> = {
  default: () => import('./default.js'),
  headless: () => import('./headless.js'),
  minimal: () => import('./minimal.js'),
  'policy-strict': () => import('./policy-strict.js'),
};

export const PRESET_NAMES = Object.keys(loaders);

/** A built-in preset by name, flattened (a preset that extends another comes back as its full plugin list). */
export async function loadPreset(name: string): Promise<Preset | undefined> {
  const load = loaders[name];
  return load ? flattenPreset((await load()).default, loadPreset, PRESET_NAMES) : undefined;
}
