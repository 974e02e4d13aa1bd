/**
 * The commander program of `keel`: built from flag tables (Keel's own below, Claude Code's in claude-compat.ts,
 * and the flags plugins register in `kernel.flags`), with the built-in sub-commands and the plugins' ones, so
 * `keel --help` lists every flag and sub-command with the plugin that owns it.
 */
import { Command, Option } from 'commander';
import { KeelError } from '../kernel/errors.js';
import type { Kernel } from '../kernel/kernel.js';
import type { FlagDefinition, SubcommandDefinition } from '../kernel/types.js';
import { CLAUDE_FLAGS } from './claude-compat.js';

export const KEEL_VERSION = '0.1.0';

/** A flag of the CLI's own tables: a plugin's `FlagDefinition` plus what only built-in flags need. */
export interface CliFlag extends FlagDefinition {
  short?: string;
  /** Another spelling of the long name (`allowed-tools` beside `allowedTools`). */
  aliases?: string[];
  /** Each use adds to a list. */
  repeatable?: boolean;
  default?: unknown;
  /** Who owns it, for `--help`: a plugin's name, or `claude-compat`; none for Keel's own. */
  owner?: string;
}

const positiveInteger = (flag: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new KeelError(`${flag}: expected a positive integer, got "${value}"`, { exitCode: 2 });
  return n;
};

/** Keel's own flags. Their values decide how the kernel is assembled, so they are parsed before it is. */
export const CORE_FLAGS: CliFlag[] = [
  { name: 'print', short: 'p', description: 'headless: run the prompt, print the result, exit' },
  { name: 'output-format', value: '<format>', description: 'output of -p', choices: ['text', 'json', 'stream-json'], default: 'text' },
  { name: 'input-format', value: '<format>', description: 'input of the sdk mode', choices: ['text', 'stream-json'], default: 'text' },
  { name: 'resume', short: 'r', value: '[id]', description: 'resume a session (no id: list them)' },
  { name: 'continue', short: 'c', description: "resume this project's newest session" },
  { name: 'fork-session', description: 'with --resume/--continue: continue in a new session copied from the old one' },
  { name: 'permission-mode', value: '<mode>', description: 'auto | edits | ask | manual | plan' },
  { name: 'model', value: '<model>', description: 'the main model' },
  { name: 'small-model', value: '<model>', description: 'the model for summaries and other auxiliary calls' },
  { name: 'max-turns', value: '<n>', description: 'stop after this many model turns', parse: positiveInteger('--max-turns') },
  { name: 'preset', value: '<name>', description: 'the preset to assemble (default, headless, minimal)' },
  { name: 'ui', value: '<name>', description: 'the interactive frontend: ink (default) or plain (readline)' },
  { name: 'config', value: '<file>', description: 'use this config file instead of searching for agent.config.*' },
  { name: 'trust', description: 'trust this folder for this run (project config and servers may run)' },
  { name: 'verbose', description: 'log plugin diagnostics to stderr' },
  { name: 'mcp-config', value: '<file|json>', description: 'MCP servers for this run ({"mcpServers": {…}}); repeatable', repeatable: true },
];

/** The sub-commands the CLI answers itself (plugins add theirs through `kernel.subcommands`). */
const BUILT_IN_COMMANDS: Array<{ name: string; description: string; json?: boolean; options?: Array<[flag: string, description: string]> }> = [
  { name: 'describe', description: "print each hook's taps in order for the configured preset" },
  { name: 'trust', description: 'trust this project folder: its agent.config.*, MCP servers and hooks may run' },
  {
    name: 'sessions',
    description: "list this project's sessions (id, last activity, turns, cost, first prompt)",
    json: true,
    options: [['--all', "also list sub-agents' sessions and sessions without a model turn"]],
  },
  { name: 'help', description: 'show this help, with the flags and sub-commands of the plugins your config adds (help <command>: its help)' },
];

export const BUILT_IN_NAMES = new Set(BUILT_IN_COMMANDS.map((c) => c.name));

function collect(value: unknown, previous: unknown[] | undefined): unknown[] {
  return [...(previous ?? []), value];
}

function toOption(flag: CliFlag): Option {
  const names = [flag.short ? `-${flag.short}` : undefined, `--${flag.name}`, ...(flag.aliases ?? []).map((a) => `--${a}`)].filter(Boolean).join(', ');
  const owner = flag.owner ? ` [${flag.owner}${flag.modes ? `; modes: ${flag.modes.join(', ')}` : ''}]` : '';
  const option = new Option(`${names}${flag.value ? ` ${flag.value}` : ''}`, `${flag.description}${owner}`);
  if (flag.choices) option.choices(flag.choices);
  const parse = flag.parse;
  if (flag.repeatable) option.argParser((value: string, previous: unknown[] | undefined) => collect(parse ? parse(value) : value, previous));
  else if (parse) option.argParser((value: string) => parse(value));
  if (flag.default !== undefined) option.default(flag.default);
  return option;
}

/** The flags plugins registered, as CLI flags owned by their plugin; a name Keel's flags hold already is refused. */
export function pluginFlags(kernel: Kernel): CliFlag[] {
  const taken = new Set([...CORE_FLAGS, ...CLAUDE_FLAGS].flatMap((f) => [f.name, ...(f.aliases ?? [])]).concat('help', 'version'));
  return kernel.flags.list().map((flag) => {
    const owner = kernel.flags.ownerOf(flag.name);
    if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(flag.name)) throw new KeelError(`plugin ${owner}: flag name "${flag.name}" must be kebab-case without dashes in front (e.g. "dry-run")`, { exitCode: 2 });
    if (taken.has(flag.name)) throw new KeelError(`plugin ${owner}: the flag --${flag.name} is one of Keel's own; pick another name`, { exitCode: 2 });
    return { ...flag, owner };
  });
}

/**
 * The program: Keel's flags, Claude Code's, `extra` (plugins'), the built-in sub-commands and `subcommands` (the
 * plugins', listed for help; `main` dispatches them itself).
 */
export function buildProgram(extra: CliFlag[] = [], subcommands: Array<{ definition: SubcommandDefinition; owner?: string }> = []): Command {
  const program = new Command('keel')
    .description('A microkernel coding agent for the terminal')
    .version(KEEL_VERSION, '-v, --version')
    .argument('[prompt]', 'the request (with -p: run headless and print the answer)')
    .showHelpAfterError(false)
    .exitOverride();
  for (const flag of [...CORE_FLAGS, ...CLAUDE_FLAGS, ...extra]) program.addOption(toOption(flag));
  for (const command of BUILT_IN_COMMANDS) {
    const sub = program.command(command.name).description(command.description);
    if (command.json) sub.option('--json', 'print the list as JSON');
    for (const [flag, description] of command.options ?? []) sub.option(flag, description);
  }
  for (const { definition, owner } of subcommands) {
    program.command(definition.name).description(`${definition.description}${owner ? ` [${owner}]` : ''}`);
  }
  return program;
}

/** `keel <name> --help` for a plugin's sub-command: usage, description, options, owner. */
export function subcommandHelp(definition: SubcommandDefinition, owner: string | undefined): string {
  const lines = [`Usage: ${definition.usage ?? `keel ${definition.name}`}`, '', definition.description];
  if (definition.options?.length) {
    const width = Math.max(...definition.options.map(([flag]) => flag.length));
    lines.push('', 'Options:', ...definition.options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`));
  }
  if (owner) lines.push('', `From the ${owner} plugin.`);
  return `${lines.join('\n')}\n`;
}

/** Commander's "error: …\n(Did you mean …?)" as one line without its own prefix. */
export function flagError(text: string): string {
  return text
    .replace(/^error:\s*/, '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ')
    .replace('(Did you mean', '(did you mean');
}

/** The value of every plugin flag given, by its name. */
export function pluginFlagValues(program: Command, flags: CliFlag[]): Record<string, unknown> {
  const opts = program.opts() as Record<string, unknown>;
  const values: Record<string, unknown> = {};
  for (const option of program.options) {
    const flag = flags.find((f) => option.long === `--${f.name}`);
    if (flag && opts[option.attributeName()] !== undefined) values[flag.name] = opts[option.attributeName()];
  }
  return values;
}
