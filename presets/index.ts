import type { Preset } from '../kernel/index.js';
import { flattenPreset } from './flatten.js';
import defaultPreset from './default.js';
import fleetWorker from './fleet-worker.js';
import headless from './headless.js';
import minimal from './minimal.js';
import policyStrict from './policy-strict.js';

/**
 * The built-in presets by name. They are bundled with the CLI, not loaded on demand: nearly every run uses one, they
 * share their plugins, and each module the binary loads apart costs a few milliseconds of a start-up.
 */
const presets: Record<string, Preset> = { default: defaultPreset, headless, minimal, 'policy-strict': policyStrict, 'fleet-worker': fleetWorker };

export { flattenPreset, type PresetLoader } from './flatten.js';

export const PRESET_NAMES = Object.keys(presets);

/** A built-in preset by name, flattened (a preset that extends another comes back as its full plugin list). */
export async function loadPreset(name: string): Promise<Preset | undefined> {
  const preset = Object.hasOwn(presets, name) ? presets[name] : undefined;
  return preset ? flattenPreset(preset, loadPreset, PRESET_NAMES) : undefined;
}
