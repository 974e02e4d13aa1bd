import { definePlugin, runAgent } from '../../kernel/index.js';

const NAME = 'inspect';

/**
 * The tools to see inside: `keel config` (the merged config with each key's source), `keel plugins` (plugins and
 * each hook's taps in order), `keel doctor` (what Keel needs, checked) and `keel init` (a typed agent.config.ts
 * and an AGENTS.md skeleton for this project). Each sub-command's code is loaded when it runs. In a session, the
 * slash commands /config and /doctor print the same, and /init has the model survey the repository and write
 * or improve AGENTS.md (or CLAUDE.md) through the permission-checked file tools.
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

    kernel.commands.register({
      name: 'config',
      description: 'show the merged config, each key with the file, variable or flag that set it',
      async run() {
        const { formatConfig } = await import('./cold.js');
        return formatConfig(kernel);
      },
    });
    kernel.commands.register({
      name: 'doctor',
      description: 'check Node, auth, config, trust, the sandbox, ripgrep and what plugins add, and say what to fix',
      async run() {
        const { formatDoctor, runDoctor } = await import('./cold.js');
        return formatDoctor(await runDoctor(kernel, process.env));
      },
    });
    kernel.commands.register({
      name: 'init',
      description: 'have the model survey the repository and write or improve AGENTS.md (or CLAUDE.md); writes are asked as usual',
      async run(args, ctx) {
        const { initPrompt } = await import('./cold.js');
        const run = await runAgent(kernel, ctx.session, initPrompt(ctx.session.projectRoot, args.trim()), { signal: ctx.signal });
        if (run.isError) throw new Error(run.error ?? run.subtype);
        return run.result;
      },
    });
  },
}));
