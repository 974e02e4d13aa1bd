/**
 * The edge: parse flags, resolve config, build the kernel from a preset, pick the mode, hand over to its
 * frontend. The only file that loads presets, by name. The built-in presets are imported statically (one
 * bundle chunk instead of six on every run: see bench/RESULTS.md); their plugins' heavy parts still load lazily.
 */
import { READER_GONE_EXIT, watchReader } from './reader.js';
import { didYouMean, nearNames } from './suggest.js';
import { existsSync, readFileSync } from 'node:fs';
import { CommanderError, type Command } from 'commander';
import {
  envLayer,
  inertKeys,
  keelHome,
  mergeLayers,
  validateLayer,
  type ConfigLayer,
  type ResolvedConfig,
} from './config.js';
import { findProjectConfig, findProjectRoot, findUserConfig } from './config-files.js';
import { KeelError, userExitCode, userMessage } from '../kernel/errors.js';
import { createKernel, type Kernel } from '../kernel/kernel.js';
import { loadPreset, PRESET_NAMES } from '../presets/index.js';
import { loadConfigModule } from './load-module.js';
import { searchConfig } from './config-search.js';
import type { Plugin, Preset } from '../kernel/plugin.js';
import { flattenPreset } from '../presets/flatten.js';
import { createSession, startSession } from '../kernel/session.js';
import { readStdin, stdinIsTTY } from './stdin.js';
import { describeProtected } from './describe-protected.js';
import { splitToolList } from '../kernel/tool-names.js';
import { presetFromPackage, resolvePluginNames, type PackageSource, type SearchContext } from './resolve-package.js';
import { resolveTrust, trustFolder, untrustedWarning } from './trust.js';
import type { DetectedMode, Io, ModeContext, ModeDefinition } from '../kernel/types.js';
import type { CommandLine } from './options.js';
import { claudeValues, debugFilter, toolsFlag } from './claude-compat.js';
import { BUILT_IN_NAMES, buildProgram, flagError, pluginFlags, pluginFlagValues, subcommandHelp, type CliFlag } from './program.js';
import path from 'node:path';
import { applyManagedEnv, loadManaged, managedRefusal, missingEnforcer, restrictLayers } from './managed.js';
import managedSettings from '../plugins/managed-settings/index.js';

export { KEEL_VERSION, flagError } from './program.js';

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

/** Commander's output through `io`; its errors kept back while `held` (a first pass that may not be the last). */
function withOutput(program: Command, io: Io, held?: string[]): Command {
  return program.configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => io.stderr.write(s),
    // One line, like every other failure: "keel: unknown option '--prnt' (did you mean --print?)".
    outputError: (s, write) => (held ? held.push(`keel: ${flagError(s)}\n`) : write(`keel: ${flagError(s)}\n`)),
  });
}

/**
 * Stderr held back while a kernel is assembled on the side (for help, a plugin's sub-command or its flags): the
 * warnings are printed once that kernel is used, and dropped otherwise.
 */
function heldIo(io: Io): { io: Io; release(): void } {
  let held: string[] | undefined = [];
  const stderr = { write: (chunk: string) => (held ? held.push(chunk) > 0 : io.stderr.write(chunk)) } as unknown as Io['stderr'];
  return {
    io: { ...io, stderr },
    release() {
      for (const chunk of held ?? []) io.stderr.write(chunk);
      held = undefined;
    },
  };
}

/** A kernel assembled for `options` with its warnings held back, or undefined when the configuration fails. */
async function assembleAside(options: CommandLine, env: NodeJS.ProcessEnv, io: Io, failed?: (err: unknown) => void): Promise<{ kernel: Kernel; release(): void } | undefined> {
  const held = heldIo(io);
  try {
    return { kernel: await assemble(options, env, held.io), release: held.release };
  } catch (err) {
    failed?.(err);
    return undefined; // the normal path reports the configuration error
  }
}

function optionsOf(flags: Record<string, unknown>): CommandLine {
  return {
    print: flags.print as boolean | undefined,
    outputFormat: flags.outputFormat as CommandLine['outputFormat'],
    inputFormat: flags.inputFormat as CommandLine['inputFormat'],
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
    allowedTools: splitToolList((flags.allowedTools as string[] | undefined) ?? []),
    disallowedTools: splitToolList((flags.disallowedTools as string[] | undefined) ?? []),
    tools: toolsFlag(flags.tools as string[] | undefined),
    systemPrompt: flags.systemPrompt as string | undefined,
    appendSystemPrompt: flags.appendSystemPrompt as string | undefined,
    dangerouslySkipPermissions: flags.dangerouslySkipPermissions as boolean | undefined,
    addDir: (flags.addDir as string[] | undefined) ?? [],
    sessionId: flags.sessionId as string | undefined,
    includePartialMessages: flags.includePartialMessages as boolean | undefined,
    jsonSchema: flags.jsonSchema as Record<string, unknown> | undefined,
    maxBudgetUsd: flags.maxBudgetUsd as number | undefined,
    fallbackModel: flags.fallbackModel as string | undefined,
    goal: flags.goal as string | undefined,
    goalCheck: flags.goalCheck as string | undefined,
    settings: flags.settings as string | undefined,
    settingSources: flags.settingSources as string[] | undefined,
    strictMcpConfig: flags.strictMcpConfig as boolean | undefined,
    agents: flags.agents as Record<string, unknown> | undefined,
    debug: flags.debug as string | boolean | undefined,
    flags: {},
  };
}

/** The words before `--`: where a `--help` or `-h` asks for help rather than being a prompt's text. */
function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--');
  const words = end === -1 ? argv : argv.slice(0, end);
  return words.includes('--help') || words.includes('-h');
}

/** The core flags of `argv`, whatever else it holds (plugin flags, a sub-command): how to assemble the kernel. */
function lenientOptions(argv: string[]): CommandLine {
  const program = buildProgram().allowUnknownOption().allowExcessArguments().helpOption(false).exitOverride();
  program.configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined });
  for (const command of program.commands) command.allowUnknownOption().helpOption(false).action(() => undefined);
  program.action(() => undefined);
  try {
    program.parse(argv, { from: 'user' });
  } catch {
    return optionsOf({ outputFormat: 'text', inputFormat: 'text' });
  }
  return optionsOf(program.opts());
}

/** `keel --help` and `keel help`: every flag and sub-command, the plugins' with their plugin. */
async function printHelp(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  const aside = await assembleAside(lenientOptions(argv), env, io);
  const kernel = aside?.kernel;
  const subcommands = (kernel?.subcommands.list() ?? []).map((definition) => ({ definition, owner: kernel?.subcommands.ownerOf(definition.name) }));
  try {
    const program = withOutput(buildProgram(kernel ? pluginFlags(kernel) : [], subcommands), io);
    io.stdout.write(program.helpInformation());
    return 0;
  } catch (err) {
    return reportError(err, io);
  }
}

/** Entry point. Returns the exit code. */
export async function main(argv: string[], io: Io = process as unknown as Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // A managed file that cannot be read stops every invocation (help and sub-commands too): fail closed.
  try {
    loadManaged(env);
  } catch (err) {
    return reportError(err, io);
  }
  const delegated = await runPluginSubcommand(argv, io, env);
  if (delegated !== undefined) return delegated;
  if (argv[0] === 'help' && argv.length === 2) {
    const aside = await assembleAside(lenientOptions([]), env, io);
    const definition = aside?.kernel.subcommands.get(argv[1]!);
    if (definition) {
      io.stdout.write(subcommandHelp(definition, aside?.kernel.subcommands.ownerOf(definition.name)));
      return 0;
    }
  }
  if ((argv[0] === 'help' && argv.length <= 2) || (!BUILT_IN_NAMES.has(argv[0] ?? '') && wantsHelp(argv))) return printHelp(argv, io, env);
  const held: string[] = [];
  let program = withOutput(buildProgram(), io, held);
  let subcommand: string | undefined;
  const parse = async (p: Command) => {
    for (const cmd of p.commands) {
      cmd.exitOverride().action(() => {
        subcommand = cmd.name();
      });
    }
    p.action(() => undefined);
    await p.parseAsync(argv, { from: 'user' });
  };
  // A flag Keel does not know may be a plugin's: the kernel is assembled first (its plugins' flags are known
  // then), the line parsed again with them, and that kernel serves the run.
  let early: { kernel: Kernel; release(): void } | undefined;
  let extra: CliFlag[] = [];
  try {
    try {
      await parse(program);
    } catch (err) {
      if (!(err instanceof CommanderError) || err.code !== 'commander.unknownOption') throw err;
      early = await assembleAside(lenientOptions(argv), env, io);
      extra = early ? pluginFlags(early.kernel) : [];
      if (!extra.length) throw err;
      held.length = 0;
      subcommand = undefined;
      program = withOutput(buildProgram(extra), io, held);
      await parse(program);
    }
  } catch (err) {
    for (const line of held) io.stderr.write(line);
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    return reportError(err, io);
  }
  for (const line of held) io.stderr.write(line);
  const flags = program.opts() as Record<string, unknown>;
  if (flags.resume === '') return reportError(new KeelError('--resume: the session id is empty (run keel sessions to list them)', { exitCode: 2 }), io);
  const options = optionsOf(flags);
  options.flags = pluginFlagValues(program, extra);
  try {
    if (subcommand === 'trust') {
      const root = findProjectRoot(process.cwd());
      io.stdout.write(`Trusted ${root} (stored in ${trustFolder(keelHome(env), root)})\n`);
      return 0;
    }
    if (!subcommand) options.askTrust = detectMode({ env, print: Boolean(options.print), inputFormat: options.inputFormat, stdinIsTTY: stdinIsTTY(io) }) === 'interactive';
    let kernel: Kernel;
    // The kernel assembled for the plugin flags serves the run when it was assembled as this run would be.
    if (early && !options.askTrust) {
      early.release();
      kernel = early.kernel;
    } else kernel = await assemble(options, env, io);
    if (subcommand === 'describe') {
      io.stdout.write(`${kernel.describe()}\n\n${describeProtected(kernel.protected.list())}\n`);
      return 0;
    }
    if (subcommand === 'sessions') {
      const opts = program.commands.find((c) => c.name() === 'sessions')?.opts() ?? {};
      return await runCommand(kernel, 'sessions', [opts.json ? '--json' : '', opts.all ? '--all' : ''].join(' ').trim(), io);
    }
    return await runMode(kernel, options, program.args[0], io, env);
  } catch (err) {
    return reportError(err, io);
  }
}

/**
 * `keel <name> …` where a plugin registered the sub-command `name` (`keel mcp list`): the kernel is assembled
 * without flags and the words after the name go to the sub-command (`keel <name> --help` prints its help).
 * Undefined when no plugin owns the word, so it is parsed as a prompt.
 */
async function runPluginSubcommand(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number | undefined> {
  const name = argv[0];
  if (!name || !/^[a-z][a-z0-9-]*$/.test(name) || BUILT_IN_NAMES.has(name)) return undefined;
  let failure: unknown;
  const aside = await assembleAside({ outputFormat: 'text', inputFormat: 'text' }, env, io, (err) => (failure = err));
  // `keel fleet status` with a bad config: the config's error, not the prompt parser's "too many arguments".
  if (!aside) return argv.length > 1 ? reportError(failure, io) : undefined;
  const { kernel } = aside;
  const subcommand = kernel.subcommands.get(name);
  if (!subcommand) {
    // `keel sesions`: a lone word near a sub-command's name is a typo, not a paid prompt.
    const near = argv.length === 1 ? nearNames(name, [...BUILT_IN_NAMES, 'help', ...kernel.subcommands.names()], 1) : [];
    if (near.length === 0) return undefined;
    aside.release();
    return reportError(new KeelError(`unknown command "${name}"${didYouMean(near)}; keel --help lists the commands (to send it as a prompt: keel -p "${name}")`, { exitCode: 2 }), io);
  }
  const args = argv.slice(1);
  if (args[0] === '--help' || args[0] === '-h') {
    io.stdout.write(subcommandHelp(subcommand, kernel.subcommands.ownerOf(name)));
    return 0;
  }
  aside.release();
  // A plugin's sub-command reads the project's settings (`keel mcp list`, `keel config`): say what was skipped.
  if (kernel.config.untrustedFiles?.length) io.stderr.write(untrustedWarning(kernel.config.projectRoot, kernel.config.untrustedFiles));
  try {
    return await subcommand.run(args, { kernel, io, env });
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

function flagsLayer(options: CommandLine): ConfigLayer {
  const values: Record<string, unknown> = {};
  const labels: Record<string, string> = { ...FLAG_KEYS };
  for (const key of Object.keys(FLAG_KEYS) as Array<keyof typeof FLAG_KEYS>) {
    if (options[key] !== undefined) values[key] = options[key];
  }
  claudeValues(options, values, labels);
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

/** Resolves config layers, loads the preset and plugins, applies them and seals the kernel. */
export async function assemble(options: CommandLine, env: NodeJS.ProcessEnv, io?: Io, cwd = process.cwd()): Promise<Kernel> {
  // Managed settings first: a bad file stops every mode, and their env is in force before anything reads it.
  const managed = loadManaged(env);
  if (managed) applyManagedEnv(managed, env);
  const home = keelHome(env);
  const projectRoot = findProjectRoot(cwd);
  const layers: ConfigLayer[] = [];
  // Names are checked first (no file, no cosmiconfig loaded); cosmiconfig searches and loads where code runs anyway.
  const userFile = findUserConfig(home);
  const user = userFile ? await searchConfig(home, home) : undefined;
  if (user) layers.push({ kind: 'user', source: user.file, values: user.values });
  const projectFile = findProjectConfig(cwd, projectRoot, options.config);
  // Nothing from an untrusted project runs; a file named with --config is the user's own choice.
  const trusted = await resolveTrust({ home, folder: projectRoot, flag: options.trust, files: projectFile ? [projectFile] : [] });
  const untrusted: string[] = [];
  if (projectFile && options.config) layers.push({ kind: 'project', source: projectFile, values: await loadConfigModule(projectFile) });
  else if (projectFile && trusted) {
    const project = await searchConfig(cwd, projectRoot);
    if (project) layers.push({ kind: 'project', source: project.file, values: project.values });
  } else if (projectFile) untrusted.push(projectFile);
  layers.push(envLayer(env), flagsLayer(options), ...(managed?.layers ?? []));
  // Plugins and presets named by package resolve once trust is known: see cli/resolve-package.ts.
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
      if (layer.kind === 'managed') throw new KeelError(`plugin ${plugin.name}: contributed a managed layer (${layer.source}); only managed-settings files are managed`, { code: 'config', exitCode: 2 });
      if (layer.kind === 'project' && !trusted) untrusted.push(layer.source);
      else layers.splice(insertAt(layers, layer.kind), 0, layer);
    }
  }
  if (managed) {
    const missing = missingEnforcer(layers, managed.policy, plugins.map((p) => p.name));
    if (missing) throw new KeelError(missing, { code: 'config', exitCode: 2 });
    for (const warning of restrictLayers(layers, managed.policy)) io?.stderr.write(`keel: warning: ${warning}\n`);
    plugins.push(managedSettings());
  }
  const inert = inertKeys(layers, plugins.map((p) => p.name));
  for (const warning of inert.warnings) io?.stderr.write(`keel: warning: ${warning}\n`);
  const shapes = Object.assign({}, inert.shapes, ...plugins.map((p) => p.config ?? {}));
  for (const layer of layers) validateLayer(layer, shapes);
  const config: ResolvedConfig = { ...mergeLayers(layers, base), preset, packages, trusted, untrustedFiles: untrusted, configFiles: [userFile, projectFile].filter((f): f is string => f !== undefined) };
  if (managed) {
    const refusal = managedRefusal(layers, config, managed.policy, plugins.map((p) => p.name));
    if (refusal) throw new KeelError(refusal, { code: 'config', exitCode: 2 });
    config.managed = managed.policy;
  }
  if (!config.apiKey && (config.provider ?? 'anthropic') === 'anthropic') {
    const stored = env.ANTHROPIC_API_KEY ? undefined : storedApiKey(home);
    const key = env.ANTHROPIC_API_KEY || stored;
    if (key) {
      config.apiKey = key;
      config.sources.apiKey = stored ? path.join(home, 'auth.json') : 'env';
    }
  }
  if (!config.baseURL && env.ANTHROPIC_BASE_URL && (config.provider ?? 'anthropic') === 'anthropic') {
    config.baseURL = env.ANTHROPIC_BASE_URL;
    config.sources.baseURL = 'env';
  }

  const kernel = createKernel({ config });
  if ((options.verbose || options.debug) && io) {
    const shown = debugFilter(options.debug);
    kernel.hooks.event.tap('cli', (event) => {
      if (event.type === 'log' && shown(event.source)) io.stderr.write(`[${event.level}]${event.source ? ` ${event.source}:` : ''} ${event.message}\n`);
    });
  }
  for (const plugin of plugins) kernel.use(plugin);
  return kernel.seal();
}

const LAYER_ORDER = ['defaults', 'user', 'project', 'env', 'flags', 'managed'];

/** A contributed layer goes after the last layer of its kind, keeping precedence order. */
function insertAt(layers: ConfigLayer[], kind: ConfigLayer['kind']): number {
  const rank = LAYER_ORDER.indexOf(kind);
  let at = 0;
  layers.forEach((layer, index) => {
    if (LAYER_ORDER.indexOf(layer.kind) <= rank) at = index + 1;
  });
  return at;
}

/** A preset object, or a name: a built-in first, else a package (see cli/resolve-package.ts). */
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

async function runMode(assembled: Kernel, options: CommandLine, positional: string | undefined, io: Io, env: NodeJS.ProcessEnv): Promise<number> {
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
  // The reader of stdout going away ends a run like closed input (interactive UIs own their terminal themselves).
  const reader = mode === 'interactive' ? undefined : watchReader(io.stdout, io.stderr, controller.signal);
  const ctx: ModeContext = {
    kernel,
    mode,
    options,
    prompt,
    io: reader ? { ...io, stdout: reader.stdout } : io,
    signal: reader ? reader.signal : controller.signal,
    startSession: (overrides) => startSession(kernel, { resume, ...(options.sessionId && !resume ? { id: options.sessionId } : {}), ...overrides }),
  };
  try {
    const code = await frontend.run(ctx);
    await reader?.flushed();
    if (reader?.gone) {
      io.stderr.write(reader.line());
      return READER_GONE_EXIT;
    }
    return controller.signal.aborted ? signalExit : code;
  } finally {
    reader?.dispose();
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
async function settleTrust(kernel: Kernel, frontend: ModeDefinition, options: CommandLine, env: NodeJS.ProcessEnv, io: Io): Promise<{ kernel: Kernel; frontend: ModeDefinition }> {
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
