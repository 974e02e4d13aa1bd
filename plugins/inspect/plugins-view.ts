/** `keel plugins`: the plugins (name, version, source) and each hook's taps in order. */
import type { Kernel, PackageSource, Plugin, Preset } from '../../kernel/index.js';

export function pluginsText(kernel: Kernel): string {
  const preset = kernel.config.preset as Preset | string;
  const fromPreset = new Set(typeof preset === 'string' ? [] : preset.plugins);
  const presetName = typeof preset === 'string' ? preset : preset.name;
  const packages = kernel.config.packages ?? [];
  const presetPackage = packages.find((s) => s.kind === 'preset' && s.provides === presetName);
  const fromPackage = (s: PackageSource) => `package ${s.package}${s.version ? `@${s.version}` : ''} (${s.path}; ${s.source}: ${s.key})`;
  const source = (p: Plugin) => {
    const byName = packages.find((s) => s.kind === 'plugin' && s.provides === p.name);
    if (byName && !fromPreset.has(p)) return fromPackage(byName);
    if (fromPreset.has(p)) return `preset ${presetName}${presetPackage ? `, ${fromPackage(presetPackage)}` : ''}`;
    return `config ${kernel.config.sources.plugins ?? ''}`.trim();
  };
  const rows = kernel.plugins.map((p) => [p.name, p.version ?? '-', source(p)]);
  const width = Math.max(...rows.map((r) => r[0]!.length), 6);
  const lines = [`${'plugin'.padEnd(width)}  version  source`, ...rows.map(([name, version, source]) => `${name!.padEnd(width)}  ${version!.padEnd(7)}  ${source}`)];
  return `${lines.join('\n')}\n\nHooks and their taps, in call order:\n${kernel.describe()}`;
}
