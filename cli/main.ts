/**
 * The edge: parse flags, resolve config, build the kernel from a preset, pick the mode, hand over to its
 * frontend. The only kernel file that loads presets, by name. The built-in presets are imported statically (one
 * bundle chunk instead of six on every run: see bench/RESULTS.md); their plugins' heavy parts still load lazily.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import {
  envLayer,
  findProjectConfig,
  findProjectRoot,
  findUserConfig,
  inertKeys,
  keelHome,
  mergeLayers,
  validateLayer,
  type ConfigLayer,
  type ResolvedConfig,
} from './config.js';
import { ensureDir } from '../kernel/ensure-dir.js';
import { errorMessage, KeelError, userExitCode, userMessage } from '../kernel/errors.js';
import { createKernel, type Kernel } from '../kernel/kernel.js';
import { loadPreset, PRESET_NAMES } from '../presets/index.js';
import { loadConfigModule } from './load-module.js';
import type { Plugin, Preset } from '../kernel/plugin.js';
import { flattenPreset } from '../kernel/preset.js';
import { createSession, startSession } from '../kernel/session.js';
import { readStdin, stdinIsTTY } from './stdin.js';
import { describeProtected } from '../kernel/protected.js';
import { splitToolList } from '../kernel/tool-names.js';
import { presetFromPackage, resolvePluginNames, type PackageSource, type SearchContext } from './resolve-package.js';
import { resolveTrust, trustFolder, untrustedWarning } from './trust.js';
import type { CliOptions, DetectedMode, Io, ModeContext, ModeDefinition } from '../kernel/types.js';

export const KEEL_VERSION = '0.1.0';

/** Mode priority: subagent → sdk → headless → pipe → interactive. */
export function detectMode(input: { env: NodeJS.ProcessEnv; print: boolean; inputFormat?: string; stdinIsTTY: boolean }): DetectedMode {
  if (input.env.KEEL_SUBAGENT_MODE === '1') return 'subagent';
  if (input.env.KEEL_SDK_MODE === '1' || input.inputFormat === 'stream-json') return 'sdk';
  if (input.print) return 'headless';
  if (!input.stdinIsTTY) return 'pipe';
  return 'interactive';
}

/** Which registered frontend serves a detected mode. */
export const FRONTEND_FOR: Record<DetectedMode, string> = {
  subagent: 'subagent',
  sdk: 'sdk',
  headless: 'print',
  pipe: 'print',
  interactive: 'interactive',
};

function buildProgram(): Command {
  const program = new Command('keel')
    .description('A microkernel coding agent for the terminal')
    .version(KEEL_VERSION, '-v, --version')
    .argument('[prompt]', 'the request (with -p: run headless and print the answer)')
    .option('-p, --print', 'headless: run the prompt, print the result, exit')
    .addOption(new Option('--output-format <format>', 'output of -p').choices(['text', 'json', 'stream-json']).default('text'))
    .addOption(new Option('--input-format <format>', 'input of the sdk mode').choices(['text', 'stream-json']).default('text'))
    .option('-r, --resume [id]', 'resume a session (no id: list them)')
    .option('-c, --continue', "resume this project's newest session")
    .option('--fork-session', 'with --resume/--continue: continue in a new session copied from the old one')
    .option('--permission-mode <mode>', 'auto | edits | ask | manual | plan')
    .option('--model <model>', 'the main model')
    .option('--small-model <model>', 'the model for summaries and other auxiliary calls')
    .option('--max-turns <n>', 'stop after this many model turns', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw new KeelError(`--max-turns: expected a positive integer, got "${v}"`, { exitCode: 2 });
      return n;
    })
    .option('--preset <name>', 'the preset to assemble (default, headless, minimal)')
    .option('--ui <name>', 'the interactive frontend: ink (default) or plain (readline)')
    .option('--config <file>', 'use this config file instead of searching for agent.config.*')
    .option('--trust', 'trust this folder for this run (project config and servers may run)')
    .option('--verbose', 'log plugin diagnostics to stderr')
    .option('--mcp-config <file|json>', 'MCP servers for this run ({"mcpServers": {…}}); repeatable', (v: string, all: string[] = []) => [...all, v])
    // Claude Code's flags, so scripts and SDK hosts written for `claude` drive Keel unchanged.
    .option('--allowedTools, --allowed-tools <rules>', 'permission rules to allow (comma- or space-separated; repeatable)', collect, [])
    .option('--disallowedTools, --disallowed-tools <rules>', 'permission rules to deny (comma- or space-separated; repeatable)', collect, [])
    .option('--tools <names>', 'the only tools this agent has ("" for none, "default" for all)', collect, undefined)
    .option('--system-prompt <text>', "replace Keel's base system prompt")
    .option('--append-system-prompt <text>', 'append to the system prompt')
    .option('--dangerously-skip-permissions', 'the bypassPermissions mode (= auto): protected paths are still asked')
    .option('--add-dir <dir>', 'another directory tools may use as if inside the project (repeatable)', collect, [])
    .option('--session-id <uuid>', 'the id of the new session', (v) => {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) throw new KeelError(`--session-id: expected a UUID, got "${v}"`, { exitCode: 2 });
      return v.toLowerCase();
    })
    .option('--permission-prompt-tool <tool>', 'stdio: ask the SDK host (can_use_tool control requests)', (v) => {
      if (v !== 'stdio') throw new KeelError(`--permission-prompt-tool: only "stdio" is supported, got "${v}"`, { exitCode: 2 });
      return v;
    })
    .option('--include-partial-messages', 'stream-json: also print stream_event lines as the model writes')
    .showHelpAfterError(false)
    .exitOverride();
  program.command('login').description('store an Anthropic API key in $KEEL_HOME/auth.json');
  program.command('describe').description("print each hook's taps in order for the configured preset");
  program.command('trust').description("trust this project folder: its agent.config.*, MCP servers and hooks may run");
  program.command('sessions').description("list this project's sessions (id, last activity, turns, cost, first prompt)").option('--json', 'print the list as JSON');
  program.command('help').description('show this help (the same as keel --help)');
  return program;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Entry point. Returns the exit code. */
export async function main(argv: string[], io: Io = process as unknown as Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = buildProgram();
  program.configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => io.stderr.write(s),
    // One line, like every other failure: "keel: unknown option '--prnt' (did you mean --print?)".
    outputError: (s, write) => write(`keel: ${flagError(s)}\n`),
  });
  const delegated = await runPluginSubcommand(argv, program, io, env);
  if (delegated !== undefined) return delegated;
  let subcommand: string | undefined;
  for (const cmd of program.commands) {
    cmd.exitOverride().action(() => {
      subcommand = cmd.name();
    });
  }
  program.action(() => undefined);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    return reportError(err, io);
  }
  if (subcommand === 'help') {
    io.stdout.write(program.helpInformation());
    return 0;
  }
  const flags = program.opts() as Record<string, unknown>;
  if (flags.resume === '') return reportError(new KeelError('--resume: the session id is empty (run keel sessions to list them)', { exitCode: 2 }), io);
  const options: CliOptions = {
    print: flags.print as boolean | undefined,
    outputFormat: flags.outputFormat as CliOptions['outputFormat'],
    inputFormat: flags.inputFormat as CliOptions['inputFormat'],
    resume: flags.resume as string | boolean | undefined,
    continue: flags.continue as boolean | undefined,
    forkSession: flags.forkSession as boolean | undefined,
    permissionMode: flags.permissionMode as string | undefined,
    model: flags.model as string | undefined,
    smallModel: flags.smallModel as string | undefined,
    maxTurns: flags.maxTurns as number | undefined,
    preset: flags.preset as string | undefined,
    ui: flags.ui as string | undefined,
    config: flags.config as string | undefined,
    trust: flags.trust as boolean | undefined,
    verbose: flags.verbose as boolean | undefined,
    mcpConfig: flags.mcpConfig as string[] | undefined,
    allowedTools: splitToolList(flags.allowedTools as string[]),
    disallowedTools: splitToolList(flags.disallowedTools as string[]),
    tools: toolsFlag(flags.tools as string[] | undefined),
    systemPrompt: flags.systemPrompt as string | undefined,
    appendSystemPrompt: flags.appendSystemPrompt as string | undefined,
    dangerouslySkipPermissions: flags.dangerouslySkipPermissions as boolean | undefined,
    addDir: flags.addDir as string[],
    sessionId: flags.sessionId as string | undefined,
    permissionPromptTool: flags.permissionPromptTool as string | undefined,
    includePartialMessages: flags.includePartialMessages as boolean | undefined,
  };
  try {
    if (subcommand === 'login') return await login(options, io, env);
    if (subcommand === 'trust') {
      const root = findProjectRoot(process.cwd());
      io.stdout.write(`Trusted ${root} (stored in ${trustFolder(keelHome(env), root)})\n`);
      return 0;
    }
    if (!subcommand) options.askTrust = detectMode({ env, print: Boolean(options.print), inputFormat: options.inputFormat, stdinIsTTY: stdinIsTTY(io) }) === 'interactive';
    const kernel = await assemble(options, env, io);
    if (subcommand === 'describe') {
      io.stdout.write(`${kernel.describe()}\n\n${describeProtected(kernel.protected.list())}\n`);
      return 0;
    }
    if (subcommand === 'sessions') {
      const json = Boolean(program.commands.find((c) => c.name() === 'sessions')?.opts().json);
      return await runCommand(kernel, 'sessions', json ? '--json' : '', io);
    }
    return await runMode(kernel, options, program.args[0], io, env);
  } catch (err) {
    return reportError(err, io);
  }
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

/**
 * `keel <name> …` where a plugin registered the sub-command `name` (`keel mcp list`): the kernel is assembled
 * without flags and the words after the name go to the sub-command. Undefined when no plugin owns the word,
 * so it is parsed as a prompt.
 */
async function runPluginSubcommand(argv: string[], program: Command, io: Io, env: NodeJS.ProcessEnv): Promise<number | undefined> {
  const name = argv[0];
  if (!name || !/^[a-z][a-z0-9-]*$/.test(name) || program.commands.some((c) => c.name() === name)) return undefined;
  const warnings: string[] = [];
  const quiet = { ...io, stderr: { write: (chunk: string) => warnings.push(chunk) > 0 } as unknown as Io['stderr'] };
  let kernel: Kernel;
  try {
    kernel = await assemble({ outputFormat: 'text', inputFormat: 'text' }, env, quiet);
  } catch {
    return undefined; // the normal path reports the configuration error
  }
  const subcommand = kernel.subcommands.get(name);
  if (!subcommand) return undefined;
  for (const warning of warnings) io.stderr.write(warning);
  // A plugin's sub-command reads the project's settings (`keel mcp list`, `keel config`): say what was skipped.
  if (kernel.config.untrustedFiles?.length) io.stderr.write(untrustedWarning(kernel.config.projectRoot, kernel.config.untrustedFiles));
  try {
    return await subcommand.run(argv.slice(1), { kernel, io, env });
  } catch (err) {
    return reportError(err, io);
  }
}

function reportError(err: unknown, io: Io): number {
  const exitCode = userExitCode(err);
  io.stderr.write(`keel: ${userMessage(err).split('\n')[0]}\n`);
  if (process.env.KEEL_DEBUG && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
  return exitCode;
}

const FLAG_KEYS = { model: '--model', smallModel: '--small-model', permissionMode: '--permission-mode', maxTurns: '--max-turns', preset: '--preset', ui: '--ui' } as const;

/** `--tools ""` gives no tools, `--tools default` every tool. */
function toolsFlag(values: string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const names = splitToolList(values);
  return names.length === 1 && names[0] === 'default' ? undefined : names;
}

function flagsLayer(options: CliOptions): ConfigLayer {
  const values: Record<string, unknown> = {};
  const labels: Record<string, string> = { ...FLAG_KEYS };
  for (const key of Object.keys(FLAG_KEYS) as Array<keyof typeof FLAG_KEYS>) {
    if (options[key] !== undefined) values[key] = options[key];
  }
  if (options.dangerouslySkipPermissions) {
    values.permissionMode = 'bypassPermissions';
    labels.permissionMode = '--dangerously-skip-permissions';
  }
  // The permissions plugin parses rules fully; this catches a malformed one here, where the flag can be named.
  for (const [flag, rules] of [['--allowedTools', options.allowedTools], ['--disallowedTools', options.disallowedTools]] as const) {
    const bad = rules?.find((rule) => !/^[A-Za-z0-9_*-]+(?:\(.*\S.*\))?$/s.test(rule));
    if (bad) throw new KeelError(`${flag}: invalid permission rule "${bad}" (expected ToolName or ToolName(specifier), e.g. Bash(npm test))`, { exitCode: 2 });
  }
  if (options.allowedTools?.length || options.disallowedTools?.length) {
    values.permissions = { allow: options.allowedTools ?? [], deny: options.disallowedTools ?? [] };
    labels.permissions = '--allowedTools/--disallowedTools';
  }
  const more = { tools: '--tools', systemPrompt: '--system-prompt', appendSystemPrompt: '--append-system-prompt' } as const;
  for (const [key, label] of Object.entries(more) as Array<[keyof typeof more, string]>) {
    if (options[key] !== undefined) {
      values[key] = options[key];
      labels[key] = label;
    }
  }
  if (options.addDir?.length) {
    values.additionalDirectories = options.addDir.map((dir) => path.resolve(dir));
    labels.additionalDirectories = '--add-dir';
  }
  return { kind: 'flags', source: 'flags', values, labels };
}

/** Reads `$KEEL_HOME/auth.json` ({ "apiKey": "…" }). */
export function storedApiKey(home: string): string | undefined {
  const file = path.join(home, 'auth.json');
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { apiKey?: unknown };
    return typeof parsed.apiKey === 'string' && parsed.apiKey ? parsed.apiKey : undefined;
  } catch {
    throw new KeelError(`${file}: not valid JSON; run keel login to write it again`);
  }
}

export function storeApiKey(home: string, apiKey: string): string {
  ensureDir(home);
  const file = path.join(home, 'auth.json');
  writeFileSync(file, `${JSON.stringify({ apiKey }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** Resolves config layers, loads the preset and plugins, applies them and seals the kernel. */
export async function assemble(options: CliOptions, env: NodeJS.ProcessEnv, io?: Io, cwd = process.cwd()): Promise<Kernel> {
  const home = keelHome(env);
  const projectRoot = findProjectRoot(cwd);
  const layers: ConfigLayer[] = [];
  const userFile = findUserConfig(home);
  if (userFile) layers.push({ kind: 'user', source: userFile, values: await loadConfigModule(userFile) });
  const projectFile = findProjectConfig(cwd, projectRoot, options.config);
  // Nothing from an untrusted project runs; a file named with --config is the user's own choice.
  const trusted = await resolveTrust({ home, folder: projectRoot, flag: options.trust, files: projectFile ? [projectFile] : [] });
  const untrusted: string[] = [];
  if (projectFile && (trusted || options.config)) layers.push({ kind: 'project', source: projectFile, values: await loadConfigModule(projectFile) });
  else if (projectFile) untrusted.push(projectFile);
  layers.push(envLayer(env), flagsLayer(options));
  // Plugins and presets named by package resolve once trust is known: see kernel/resolve-package.ts.
  const search: SearchContext = { projectRoot, keelHome: home, trusted };
  const packages: PackageSource[] = [];
  for (const layer of layers) await resolvePluginNames(layer, search, packages);
  for (const layer of layers) validateLayer(layer, {}, true);

  const base = { cwd, projectRoot, keelHome: home };
  const draft = mergeLayers(layers, base);
  const presetLayer = [...layers].reverse().find((l) => l.values.preset !== undefined);
  const preset = await resolvePreset(draft.preset, search, presetLayer, packages);
  const plugins = selectPlugins(preset, draft, layers);

  // Plugins may contribute layers of their own (front matter, .mcp.json) before the final validation.
  for (const plugin of plugins) {
    if (!plugin.configLayers) continue;
    // Untrusted: plugins name their project files (for the warning) without reading settings from them.
    const extra = await plugin.configLayers({ ...base, options, trusted });
    for (const layer of extra) {
      if (layer.kind === 'project' && !trusted) untrusted.push(layer.source);
      else layers.splice(insertAt(layers, layer.kind), 0, layer);
    }
  }
  const inert = inertKeys(layers, plugins.map((p) => p.name));
  for (const warning of inert.warnings) io?.stderr.write(`keel: warning: ${warning}\n`);
  const shapes = Object.assign({}, inert.shapes, ...plugins.map((p) => p.config ?? {}));
  for (const layer of layers) validateLayer(layer, shapes);
  const config: ResolvedConfig = { ...mergeLayers(layers, base), preset, packages, trusted, untrustedFiles: untrusted, configFiles: [userFile, projectFile].filter((f): f is string => f !== undefined) };
  if (!config.apiKey && (config.provider ?? 'anthropic') === 'anthropic') {
    const key = env.ANTHROPIC_API_KEY || storedApiKey(home);
    if (key) config.apiKey = key;
  }
  if (!config.baseURL && env.ANTHROPIC_BASE_URL && (config.provider ?? 'anthropic') === 'anthropic') config.baseURL = env.ANTHROPIC_BASE_URL;

  const kernel = createKernel({ config });
  if (options.verbose && io) {
    kernel.hooks.event.tap('cli', (event) => {
      if (event.type === 'log') io.stderr.write(`[${event.level}]${event.source ? ` ${event.source}:` : ''} ${event.message}\n`);
    });
  }
  for (const plugin of plugins) kernel.use(plugin);
  return kernel.seal();
}

const LAYER_ORDER = ['defaults', 'user', 'project', 'env', 'flags'];

/** A contributed layer goes after the last layer of its kind, keeping precedence order. */
function insertAt(layers: ConfigLayer[], kind: ConfigLayer['kind']): number {
  const rank = LAYER_ORDER.indexOf(kind);
  let at = 0;
  layers.forEach((layer, index) => {
    if (LAYER_ORDER.indexOf(layer.kind) <= rank) at = index + 1;
  });
  return at;
}

/** A preset object, or a name: a built-in first, else a package (see kernel/resolve-package.ts). */
async function resolvePreset(preset: string | Preset, search: SearchContext, layer: ConfigLayer | undefined, packages: PackageSource[]): Promise<Preset> {
  // A file names itself and the key; a flag or variable names itself (`--preset: …`, `KEEL_PRESET: …`).
  const label = layer?.labels?.preset;
  const byName = async (name: string, key: string): Promise<Preset> => {
    const at = label ? `${label}: ` : layer ? `${layer.source}: ${key}: ` : '';
    const builtIn = await loadPreset(name);
    if (builtIn) return builtIn;
    const found = await presetFromPackage(name, search, layer, at, key);
    if ('looked' in found) throw new KeelError(`${at}unknown preset "${name}" (known presets: ${PRESET_NAMES.join(', ')}), and ${found.looked}`, { code: 'config', exitCode: 2 });
    packages.push(found.source);
    return found.preset;
  };
  const top = typeof preset === 'string' ? await byName(preset, 'preset') : preset;
  return flattenPreset(top, (name) => byName(name, 'preset.extends'), PRESET_NAMES);
}

function selectPlugins(preset: Preset, config: ResolvedConfig, layers: ConfigLayer[]): Plugin[] {
  const names = new Set(preset.plugins.map((p) => p.name));
  for (const name of config.disable) {
    if (!names.has(name)) {
      const source = [...layers].reverse().find((l) => Array.isArray(l.values.disable) && (l.values.disable as string[]).includes(name))?.source ?? 'config';
      throw new KeelError(`${source}: disable: no plugin named "${name}" in preset "${preset.name}" (its plugins: ${[...names].join(', ')})`, { exitCode: 2 });
    }
  }
  const disabled = new Set(config.disable);
  return [...preset.plugins.filter((p) => !disabled.has(p.name)), ...config.plugins];
}

/** Runs a registered command outside a conversation (no `sessionStart`) and prints what it returns. */
async function runCommand(kernel: Kernel, name: string, args: string, io: Io): Promise<number> {
  const command = kernel.commands.get(name);
  if (!command) throw new KeelError(`"${name}" needs a plugin that registers the ${name} command (session-store), and this preset has none`, { exitCode: 2 });
  const print = (text: string) => io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const output = await command.run(args, { kernel, session: createSession(kernel), print, signal: new AbortController().signal });
  if (typeof output === 'string' && output) print(output);
  return 0;
}

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
const HANDLED_SIGNALS = Object.keys(SIGNAL_NUMBERS) as NodeJS.Signals[];

async function runMode(assembled: Kernel, options: CliOptions, positional: string | undefined, io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  let kernel = assembled;
  const ttyIn = stdinIsTTY(io);
  const mode = detectMode({ env, print: Boolean(options.print), inputFormat: options.inputFormat, stdinIsTTY: ttyIn });
  // `--resume` without an id: headless frontends cannot pick, so they print the list to pick from.
  if (options.resume === true && (mode === 'headless' || mode === 'pipe')) {
    return runCommand(kernel, 'sessions', options.outputFormat === 'text' ? '' : '--json', io);
  }
  let prompt = positional;
  if (mode === 'headless' || mode === 'pipe') {
    const piped = ttyIn ? '' : await readStdin(io, mode === 'headless' ? 3000 : undefined);
    prompt = [prompt, piped.trim()].filter(Boolean).join('\n\n');
    if (!prompt) throw new KeelError('no prompt: pass one after -p or pipe it on stdin', { exitCode: 2 });
  }
  // A registered slash command (`-p /help`, `-p /cost`) calls no model, so it needs no key.
  const slash = /^\/([a-z][\w-]*)(\s|$)/.exec(prompt?.trim() ?? '');
  const needsKey = !(slash && kernel.commands.has(slash[1]!));
  if (needsKey && mode !== 'interactive' && !kernel.config.apiKey && (kernel.config.provider ?? 'anthropic') === 'anthropic') {
    throw new KeelError('no API key: set ANTHROPIC_API_KEY or run keel login');
  }
  let frontend = pickFrontend(kernel, mode);
  if (mode === 'interactive') ({ kernel, frontend } = await settleTrust(kernel, frontend, options, env, io));
  // Only a run can miss the project's settings: `sessions`, `describe` and `trust` say nothing about trust.
  else if (kernel.config.untrustedFiles?.length) io.stderr.write(untrustedWarning(kernel.config.projectRoot, kernel.config.untrustedFiles));
  const controller = new AbortController();
  let interrupts = 0;
  // The shell's convention: 128 + the signal's number (130 for SIGINT, 129 for SIGHUP, 143 for SIGTERM).
  let signalExit = 130;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    signalExit = 128 + SIGNAL_NUMBERS[signal as keyof typeof SIGNAL_NUMBERS];
    controller.abort(new Error(`interrupted by ${signal}`));
    // A second Ctrl+C leaves at once, whatever is still running.
    if (interrupts > 1) process.exit(signalExit);
  };
  // A closed terminal or a dropped SSH connection (SIGHUP) ends the run like SIGTERM: tools stop, the lock is freed.
  for (const signal of HANDLED_SIGNALS) process.on(signal, onSignal);
  const resume =
    options.resume !== undefined || options.continue
      ? { id: typeof options.resume === 'string' ? options.resume : undefined, latest: Boolean(options.continue), fork: Boolean(options.forkSession) }
      : undefined;
  const ctx: ModeContext = {
    kernel,
    mode,
    options,
    prompt,
    io,
    signal: controller.signal,
    startSession: (overrides) => startSession(kernel, { resume, ...(options.sessionId && !resume ? { id: options.sessionId } : {}), ...overrides }),
  };
  try {
    const code = await frontend.run(ctx);
    return controller.signal.aborted ? signalExit : code;
  } finally {
    for (const signal of HANDLED_SIGNALS) process.off(signal, onSignal);
  }
}

/**
 * The interactive mode a UI plugin registers is named `interactive:<ui>`. `--ui` / config `ui` picks one; without
 * it, ink, or the only UI of a preset that has one.
 */
export function interactiveModeName(kernel: Kernel): string {
  if (kernel.config.ui) return `interactive:${kernel.config.ui}`;
  const uis = kernel.modes.names().filter((n) => n.startsWith('interactive:'));
  return uis.length === 1 ? uis[0] : 'interactive:ink';
}

function pickFrontend(kernel: Kernel, mode: DetectedMode): ModeDefinition {
  const name = mode === 'interactive' ? interactiveModeName(kernel) : FRONTEND_FOR[mode];
  const frontend = kernel.modes.get(name);
  if (frontend) return frontend;
  const preset = typeof kernel.config.preset === 'string' ? kernel.config.preset : kernel.config.preset.name;
  if (mode === 'interactive') {
    const uis = kernel.modes.names().filter((n) => n.startsWith('interactive:')).map((n) => n.slice('interactive:'.length));
    if (uis.length === 0) throw new KeelError(`the preset "${preset}" has no interactive UI (plugin ui-ink or ui-plain); run keel -p "…" for a headless run`, { exitCode: 2 });
    const source = kernel.config.sources.ui;
    throw new KeelError(`${!source || source === 'flags' ? '--ui' : `${source}: ui`}: no UI named "${kernel.config.ui}" in preset "${preset}" (its UIs: ${uis.join(', ')})`, { exitCode: 2 });
  }
  throw new KeelError(`no frontend for ${mode} mode: the preset has no plugin that registers the "${name}" mode`, { exitCode: 2 });
}

/**
 * An untrusted folder with project settings: the UI asks whether to trust it (remembered when yes), and the
 * kernel is assembled again with the project's settings. A UI that cannot ask gets the one-line warning.
 */
async function settleTrust(kernel: Kernel, frontend: ModeDefinition, options: CliOptions, env: NodeJS.ProcessEnv, io: Io): Promise<{ kernel: Kernel; frontend: ModeDefinition }> {
  const files = kernel.config.untrustedFiles ?? [];
  if (files.length === 0) return { kernel, frontend };
  const { projectRoot, keelHome: home } = kernel.config;
  if (!frontend.askTrust) {
    io.stderr.write(untrustedWarning(projectRoot, files));
    return { kernel, frontend };
  }
  if (!(await frontend.askTrust({ folder: projectRoot, files }))) return { kernel, frontend };
  trustFolder(home, projectRoot);
  const trusted = await assemble(options, env, io);
  return { kernel: trusted, frontend: pickFrontend(trusted, 'interactive') };
}

async function login(options: CliOptions, io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  const home = keelHome(env);
  const key = (await readSecret('Anthropic API key: ', io)).trim();
  if (!key) throw new KeelError('login: no key entered');
  const kernel = await assemble(options, { ...env, ANTHROPIC_API_KEY: key }, io);
  const verify = kernel.services.get('auth') as { verify(key: string): Promise<void> } | undefined;
  if (verify) {
    try {
      await verify.verify(key);
    } catch (err) {
      throw new KeelError(`login: the key was refused: ${errorMessage(err)}`);
    }
  }
  const file = storeApiKey(home, key);
  io.stdout.write(`Key stored in ${file}${verify ? ' (checked with the API)' : ''}\n`);
  return 0;
}

/** Reads one line without echoing it when stdin is a terminal. */
async function readSecret(prompt: string, io: Io): Promise<string> {
  const stdin = io.stdin as NodeJS.ReadStream;
  if (!stdinIsTTY(io)) return readStdin(io);
  io.stderr.write(prompt);
  return new Promise((resolve) => {
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          io.stderr.write('\n');
          resolve(value);
          return;
        }
        if (ch === '\u0003') process.exit(130);
        if (ch === '\u007f') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
