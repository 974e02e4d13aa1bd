import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { definePlugin, KeelError, z, type ConfigLayer } from '../../kernel/index.js';
import { settingsFiles, toConfigValues } from './map.js';

const NAME = 'claude-settings';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Environment variables for the commands Keel runs (bash, hooks, MCP servers); the environment itself wins. */
    env?: Record<string, string>;
  }
}

function readSettings(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KeelError(`${file}: cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { code: 'config', exitCode: 2 });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new KeelError(`${file}: not valid JSON (${err instanceof Error ? err.message : String(err)})`, { code: 'config', exitCode: 2 });
  }
}

function parseInline(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new KeelError(`--settings: not valid JSON (${err instanceof Error ? err.message : String(err)})`, { code: 'config', exitCode: 2 });
  }
}

/**
 * Claude Code's settings as config layers, so a Claude Code user's project works on day one:
 * `~/.claude/settings.json` (user), `.claude/settings.json` and `.claude/settings.local.json` (project, in that
 * order; project layers apply only in a trusted folder). Read: `permissions` (rules with Claude Code's tool names
 * mapped, `defaultMode`), `hooks` (run by `user-hooks`), `env`, `model`, `outputStyle` (`output-styles`) and
 * `statusLine` (`status-line`). Remove the plugin to ignore them.
 */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  // `hooks`, `outputStyle` and `statusLine` are validated strictly by the plugins that own them (user-hooks,
  // output-styles, status-line) when they are loaded: their schemas, later in the preset, win.
  config: { env: z.record(z.string(), z.string()), hooks: z.record(z.string(), z.unknown()), outputStyle: z.unknown(), statusLine: z.unknown() },
  configLayers(ctx): ConfigLayer[] {
    const files = settingsFiles(ctx.projectRoot, os.homedir());
    // `--setting-sources`: the files Claude Code would read (all three by default).
    const sources = new Set(ctx.options?.settingSources ?? ['user', 'project', 'local']);
    const layers: ConfigLayer[] = [];
    const add = (kind: ConfigLayer['kind'], file: string) => {
      if (!existsSync(file)) return;
      const values = toConfigValues(readSettings(file), file);
      if (Object.keys(values).length) layers.push({ kind, source: file, values });
    };
    if (sources.has('user')) add('user', files.user);
    const [project, local] = files.project;
    for (const [source, file] of [['project', project!], ['local', local!]] as const) {
      if (!sources.has(source)) continue;
      // Untrusted: named for the CLI's warning, never parsed (a broken file must not stop Keel either).
      if (!ctx.trusted) {
        if (existsSync(file)) layers.push({ kind: 'project', source: file, values: {} });
        continue;
      }
      add('project', file);
    }
    // `--settings <file|json>`: the user's own choice on the command line, so it applies in any folder.
    const flag = ctx.options?.settings;
    if (flag !== undefined) {
      const inline = flag.trimStart().startsWith('{');
      const label = inline ? '--settings' : `--settings ${flag}`;
      const values = toConfigValues(inline ? parseInline(flag) : readSettings(path.resolve(ctx.cwd, flag)), label);
      if (Object.keys(values).length) layers.push({ kind: 'flags', source: label, values });
    }
    return layers;
  },
  apply(kernel) {
    const files = settingsFiles(kernel.config.projectRoot, os.homedir());
    for (const file of [files.user, ...files.project]) kernel.protected.add({ path: file, why: "Claude Code's settings (Keel reads its rules, hooks and env)" });
    // The environment outranks config: a variable already set is kept.
    const env = (kernel.config.env ?? {}) as Record<string, string>;
    for (const [key, value] of Object.entries(env)) if (process.env[key] === undefined) process.env[key] = value;
  },
}));
