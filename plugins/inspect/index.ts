import { definePlugin } from '../../kernel/index.js';

const NAME = 'inspect';

/**
 * The tools to see inside: `keel config` (the merged config with each key's source), `keel plugins` (plugins and
 * each hook's taps in order), `keel doctor` (what Keel needs, checked) and `keel init` (a typed agent.config.ts
 * and an AGENTS.md skeleton for this project). Each sub-command's code is loaded when it runs.
 */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    const print = (io: { stdout: { write(s: string): unknown } }, text: string) => io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    kernel.subcommands.register({
      name: 'config',
      description: 'print the merged config, each key with the file, variable or flag that set it (--json for JSON)',
      options: [['--json', 'print it as JSON']],
      async run(args, { io }) {
        const { configEntries, formatConfig } = await import('./cold.js');
        print(io, args.includes('--json') ? JSON.stringify(configEntries(kernel), null, 2) : formatConfig(kernel));
        return 0;
      },
    });
    kernel.subcommands.register({
      name: 'plugins',
      description: 'print the plugins (name, version, source) and each hook’s taps in order',
      async run(_args, { io }) {
        const { pluginsText } = await import('./cold.js');
        print(io, pluginsText(kernel));
        return 0;
      },
    });
    kernel.subcommands.register({
      name: 'doctor',
      description: 'check Node, auth, config, trust, the sandbox, ripgrep and what plugins add, and say what to fix',
      async run(_args, { io, env }) {
        const { formatDoctor, runDoctor } = await import('./cold.js');
        const checks = await runDoctor(kernel, env);
        print(io, formatDoctor(checks));
        return checks.some((c) => !c.ok && c.required) ? 1 : 0;
      },
    });
    kernel.subcommands.register({
      name: 'init',
      description: 'write a typed agent.config.ts and an AGENTS.md skeleton for this project (--force overwrites)',
      options: [['--force', 'overwrite files that exist']],
      async run(args, { io }) {
        const { init } = await import('./cold.js');
        print(io, init(kernel.config.projectRoot, args.includes('--force')).join('\n'));
        return 0;
      },
    });
  },
}));
