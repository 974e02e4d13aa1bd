import { definePlugin, type Kernel, type PackageSource, type Plugin, type Preset } from '../../kernel/index.js';
import { configEntries, formatConfig } from './config-view.js';
import { formatDoctor, runDoctor } from './doctor.js';
import { init } from './init.js';

const NAME = 'inspect';

function pluginsText(kernel: Kernel): string {
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

/**
 * The tools to see inside: `keel config` (the merged config with each key's source), `keel plugins` (plugins and
 * each hook's taps in order), `keel doctor` (what Keel needs, checked) and `keel init` (a typed agent.config.ts
 * and an AGENTS.md skeleton for this project).
 */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    const print = (io: { stdout: { write(s: string): unknown } }, text: string) => io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    kernel.subcommands.register({
      name: 'config',
      description: 'print the merged config, each key with the file, variable or flag that set it (--json for JSON)',
      async run(args, { io }) {
        print(io, args.includes('--json') ? JSON.stringify(configEntries(kernel), null, 2) : formatConfig(kernel));
        return 0;
      },
    });
    kernel.subcommands.register({
      name: 'plugins',
      description: 'print the plugins (name, version, source) and each hook’s taps in order',
      async run(_args, { io }) {
        print(io, pluginsText(kernel));
        return 0;
      },
    });
    kernel.subcommands.register({
      name: 'doctor',
      description: 'check Node, auth, config, trust, the sandbox, ripgrep and what plugins add, and say what to fix',
      async run(_args, { io, env }) {
        const checks = await runDoctor(kernel, env);
        print(io, formatDoctor(checks));
        return checks.some((c) => !c.ok && c.required) ? 1 : 0;
      },
    });
    kernel.subcommands.register({
      name: 'init',
      description: 'write a typed agent.config.ts and an AGENTS.md skeleton for this project (--force overwrites)',
      async run(args, { io }) {
        print(io, init(kernel.config.projectRoot, args.includes('--force')).join('\n'));
        return 0;
      },
    });
  },
}));
