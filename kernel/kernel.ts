import { realpathSync } from 'node:fs';
import os from 'node:os';
import { createHooks, FORGIVING_HOOKS, Stage, type HookName, type Hooks } from './hooks.js';
import { checkKernelRange, KERNEL_VERSION, type Plugin, isPlugin } from './plugin.js';
import { Registry, ServiceRegistry } from './registry.js';
import { createStore, type Store } from './store.js';
import { errorMessage } from './errors.js';
import type { AgentEvent, AppState, CommandDefinition, FlagDefinition, ModeDefinition, Services, SubcommandDefinition, ToolDefinition } from './types.js';
import { DEFAULTS, type ResolvedConfig } from './resolved-config.js';
import { coreProtectedEntries, ProtectedPaths } from './protected.js';

interface TapRecord {
  hook: HookName;
  name: string;
  owner: string | null;
  before: string[];
}

export interface Kernel {
  readonly version: string;
  readonly hooks: Hooks;
  readonly tools: Registry<ToolDefinition>;
  readonly commands: Registry<CommandDefinition>;
  readonly modes: Registry<ModeDefinition>;
  /** Sub-commands of the binary (`keel mcp …`) that plugins own; the CLI only dispatches to them. */
  readonly subcommands: Registry<SubcommandDefinition>;
  /** Command-line flags plugins add; `keel --help` lists them, frontends read them from `ctx.options.flags`. */
  readonly flags: Registry<FlagDefinition>;
  readonly services: ServiceRegistry<Services>;
  readonly state: Store<AppState>;
  /**
   * Paths Keel loads as code or settings, and its secrets: the permission policy asks before any tool writes
   * one (in every mode), the sandbox keeps them read-only. Plugins add the files they read in `apply`.
   */
  readonly protected: ProtectedPaths;
  /** The merged configuration (flags → env → project → user → defaults). */
  readonly config: ResolvedConfig;
  readonly plugins: readonly Plugin[];
  readonly sealed: boolean;
  use(plugin: Plugin): Kernel;
  seal(): Kernel;
  describe(): string;
  emit(event: AgentEvent): void;
  /**
   * Observes events at run time (frontends, embedders, tests) without tapping: taps are fixed at seal.
   * Returns the function that stops observing.
   */
  observe(listener: (event: AgentEvent) => void): () => void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, source?: string): void;
}

/** Control characters (newline and tab kept), C1 controls and bidirectional overrides, in a log message. */
const LOG_UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const caret = (ch: string) => (ch < ' ' ? `^${String.fromCharCode(ch.charCodeAt(0) + 64)}` : ch === '\x7f' ? '^?' : `<U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`);
export const visibleControls = (text: string): string => text.replace(/\r\n/g, '\n').replace(LOG_UNSAFE, caret);

export function initialState(): AppState {
  return {
    messages: [],
    isLoading: false,
    currentToolCall: null,
    tokenUsage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    cost: 0,
    contextTokens: 0,
    contextWindow: 0,
    todos: [],
  };
}

/** Default config for kernels built without the CLI (tests, embedders). */
export function defaultConfig(overrides: Partial<ResolvedConfig> = {}): ResolvedConfig {
  return {
    ...DEFAULTS,
    disable: [],
    plugins: [],
    mcpServers: {},
    permissions: { allow: [], ask: [], deny: [] },
    cwd: process.cwd(),
    projectRoot: process.cwd(),
    keelHome: process.env.KEEL_HOME ?? '',
    sources: {},
    extra: {},
    ...overrides,
  };
}

export class PluginError extends Error {
  constructor(
    readonly plugin: string,
    readonly hook: string,
    cause: unknown,
  ) {
    super(`plugin "${plugin}" failed in hook "${hook}": ${errorMessage(cause)}`, { cause });
    this.name = 'PluginError';
  }
}

export function createKernel(opts: { config?: ResolvedConfig } = {}): Kernel {
  const hooks = createHooks();
  const taps: TapRecord[] = [];
  const plugins: Plugin[] = [];
  let applying: string | null = null;
  let sealed = false;
  const owner = () => applying ?? '(direct)';
  const tools = new Registry<ToolDefinition>('tool', owner);
  const commands = new Registry<CommandDefinition>('command', owner);
  const modes = new Registry<ModeDefinition>('mode', owner);
  const subcommands = new Registry<SubcommandDefinition>('sub-command', owner);
  const flags = new Registry<FlagDefinition>('flag', owner);
  const services = new ServiceRegistry<Services>(owner);
  const state = createStore<AppState>(initialState());
  const config = opts.config ?? defaultConfig();
  const protectedPaths = new ProtectedPaths(owner);
  const real = (p: string) => {
    try {
      return realpathSync.native(p);
    } catch {
      return p;
    }
  };
  const configFiles = (config.configFiles ?? []).map(real);
  for (const entry of coreProtectedEntries({ keelHome: config.keelHome ? real(config.keelHome) : '', home: real(os.homedir()), configFiles })) {
    protectedPaths.add({ ...entry, owner: 'kernel' });
  }
  const observers = new Set<(event: AgentEvent) => void>();

  const kernel: Kernel = {
    version: KERNEL_VERSION,
    hooks,
    tools,
    commands,
    modes,
    subcommands,
    flags,
    services,
    state,
    protected: protectedPaths,
    config,
    get plugins() {
      return plugins;
    },
    get sealed() {
      return sealed;
    },
    use(plugin) {
      if (sealed) throw new Error(`cannot use plugin "${pluginName(plugin)}": the kernel is sealed`);
      if (!isPlugin(plugin)) throw new Error(`not a plugin: ${describeValue(plugin)} (expected { name, kernel, apply })`);
      plugins.push(plugin);
      applying = plugin.name;
      try {
        plugin.apply(kernel);
      } catch (err) {
        throw new Error(`plugin "${plugin.name}" failed to apply: ${errorMessage(err)}`, { cause: err });
      } finally {
        applying = null;
      }
      return kernel;
    },
    seal() {
      if (sealed) return kernel;
      validate(plugins, taps, hooks);
      sealed = true;
      tools.freeze();
      commands.freeze();
      modes.freeze();
      subcommands.freeze();
      flags.freeze();
      services.freeze();
      protectedPaths.freeze();
      return kernel;
    },
    describe() {
      return describeHooks(hooks);
    },
    emit(event) {
      hooks.event.call(event);
    },
    observe(listener) {
      observers.add(listener);
      return () => observers.delete(listener);
    },
    log(level, message, source) {
      // Messages name files and fields a repository controls: every sink prints them, none may obey them (ESC → ^[).
      hooks.event.call({ type: 'log', level, message: message.replace(LOG_UNSAFE, caret), source });
    },
  };

  for (const hookName of Object.keys(hooks) as HookName[]) {
    const hook = hooks[hookName] as unknown as TapableLike;
    hook.intercept({
      register(tap) {
        if (sealed) throw new Error(`cannot tap "${hookName}" as "${tap.name}" after the kernel is sealed (never tap inside a hook callback)`);
        taps.push({ hook: hookName, name: tap.name, owner: applying, before: toArray(tap.before) });
        return { ...tap, fn: guard(hookName, tap, kernel) };
      },
    });
  }
  hooks.event.tap({ name: 'kernel', stage: Stage.LAST }, (event) => {
    for (const observer of [...observers]) {
      try {
        observer(event);
      } catch (err) {
        process.emitWarning(`an event observer failed: ${errorMessage(err)}`);
      }
    }
  });
  return kernel;
}

interface TapInfo {
  name: string;
  type: 'sync' | 'async' | 'promise';
  fn: (...args: unknown[]) => unknown;
  before?: string | string[];
  stage?: number;
}

interface TapableLike {
  intercept(interceptor: { register(tap: TapInfo): TapInfo }): void;
  taps: TapInfo[];
}

/** Wraps a tap so its errors name the plugin and hook, and applies the hook's error policy. */
function guard(hookName: HookName, tap: TapInfo, kernel: Kernel): TapInfo['fn'] {
  const fn = tap.fn;
  const onError = (err: unknown, args: unknown[]): unknown => {
    if (FORGIVING_HOOKS.has(hookName)) {
      if (hookName !== 'event') kernel.log('error', new PluginError(tap.name, hookName, err).message, tap.name);
      else process.emitWarning(new PluginError(tap.name, hookName, err).message);
      return hookName === 'contextLoad' ? args[0] : undefined;
    }
    if (hookName === 'prePermission') {
      return { behavior: 'deny', reason: `permission check failed (${new PluginError(tap.name, hookName, err).message})` };
    }
    throw new PluginError(tap.name, hookName, err);
  };
  if (tap.type === 'sync') {
    return (...args: unknown[]) => {
      try {
        return fn(...args);
      } catch (err) {
        return onError(err, args);
      }
    };
  }
  if (tap.type === 'promise') {
    return async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        return onError(err, args);
      }
    };
  }
  return (...args: unknown[]) => {
    const callback = args[args.length - 1] as (err?: unknown, result?: unknown) => void;
    const rest = args.slice(0, -1);
    const fail = (err: unknown) => {
      try {
        callback(null, onError(err, rest));
      } catch (wrapped) {
        callback(wrapped);
      }
    };
    try {
      fn(...rest, (err: unknown, result: unknown) => (err ? fail(err) : callback(null, result)));
    } catch (err) {
      fail(err);
    }
  };
}

function validate(plugins: Plugin[], taps: TapRecord[], hooks: Hooks): void {
  const seen = new Map<string, number>();
  plugins.forEach((plugin, index) => {
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(plugin.name)) {
      throw new Error(`plugin "${plugin.name}": name must be kebab-case`);
    }
    if (seen.has(plugin.name)) throw new Error(`plugin "${plugin.name}" is registered twice`);
    seen.set(plugin.name, index);
    const range = checkKernelRange(plugin.kernel);
    if (range === 'invalid') {
      throw new Error(`plugin "${plugin.name}": kernel range "${plugin.kernel}" is not a valid semver range`);
    }
    if (range === 'unsatisfied') {
      throw new Error(`plugin "${plugin.name}" needs kernel ${plugin.kernel}, but this kernel is ${KERNEL_VERSION}`);
    }
  });
  plugins.forEach((plugin, index) => {
    for (const dep of plugin.dependencies ?? []) {
      const at = seen.get(dep);
      if (at === undefined) throw new Error(`plugin "${plugin.name}" depends on "${dep}", which is not registered`);
      if (at > index) throw new Error(`plugin "${plugin.name}" depends on "${dep}", which must be registered before it`);
    }
  });
  for (const tap of taps) {
    if (tap.owner !== null && tap.name !== tap.owner) {
      throw new Error(`plugin "${tap.owner}" tapped "${tap.hook}" as "${tap.name}": a tap's name must be its plugin's name`);
    }
    const names = new Set((hooks[tap.hook] as unknown as TapableLike).taps.map((t) => t.name));
    for (const target of tap.before) {
      if (!names.has(target)) {
        throw new Error(`plugin "${tap.owner ?? tap.name}" taps "${tap.hook}" before "${target}", but no tap of that name exists`);
      }
    }
  }
}

function describeHooks(hooks: Hooks): string {
  const lines: string[] = [];
  for (const [name, hook] of Object.entries(hooks) as unknown as Array<[string, TapableLike]>) {
    const list = hook.taps.map((tap) => (tap.stage ? `${tap.name}@${tap.stage}` : tap.name));
    lines.push(`${name}: ${list.length ? list.join(' → ') : '(none)'}`);
  }
  return lines.join('\n');
}

function toArray(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function pluginName(value: unknown): string {
  return typeof value === 'object' && value !== null && 'name' in value ? String((value as { name: unknown }).name) : '?';
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}: did you forget to call the plugin factory?`;
  return typeof value === 'object' ? `an object with keys ${Object.keys(value).join(', ') || '(none)'}` : typeof value;
}
