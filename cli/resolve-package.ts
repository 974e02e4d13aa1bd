/**
 * Plugins and presets named by package in a config (`'keel-plugin-x'`, `['keel-plugin-x', options]`,
 * `preset: 'keel-preset-x'`): where a name is looked for, and what its package must export.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isFile, pluginProblem } from './config.js';
import type { ConfigLayer, PackageSource } from '../kernel/resolved-config.js';
import { errorMessage, KeelError } from '../kernel/errors.js';
import { importModule } from './load-module.js';
import { nativeImport } from './native-import.js';
import type { Plugin, Preset } from '../kernel/plugin.js';
import { isInside } from '../kernel/protected.js';

/** A plugin or preset that came from a package: shown by `keel plugins` and `keel config`. */
export type { PackageSource };

export interface SearchContext {
  projectRoot: string;
  keelHome: string;
  trusted: boolean;
}

/** An npm package name, scoped or not; no path may slip through (`../x`, `/abs`, `./local`). */
const PACKAGE_NAME = /^(@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/i;

/** `dir/node_modules` and each ancestor's up to `root`'s, as Node walks them but never above the project. */
function walkUp(dir: string, root: string): string[] {
  const dirs: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (path.basename(d) !== 'node_modules') dirs.push(path.join(d, 'node_modules'));
    if (d === path.resolve(root) || path.dirname(d) === d) return dirs;
  }
}

/**
 * The `node_modules` folders searched for a name, first match wins. Trusted folder: the project's (Node's walk up
 * from the project config that names it, else from the project root, but never above the root, where a folder such
 * as /tmp/node_modules may belong to anyone), then the user's `$KEEL_HOME/node_modules`. Untrusted folder: the
 * user's only, whoever names it, so a cloned repository cannot plant a package under a name the user's config
 * uses. A `--config` file outside the project has its own folder's `node_modules` searched first.
 */
export function searchDirs(ctx: SearchContext, layer?: Pick<ConfigLayer, 'kind' | 'source'>): string[] {
  const file = layer?.kind === 'project' ? layer.source : undefined;
  const fileInProject = file !== undefined && isInside(file, ctx.projectRoot);
  const dirs: string[] = [];
  if (file && !fileInProject) dirs.push(path.join(path.dirname(file), 'node_modules'));
  if (ctx.trusted) dirs.push(...walkUp(fileInProject ? path.dirname(file) : ctx.projectRoot, ctx.projectRoot));
  dirs.push(path.join(ctx.keelHome, 'node_modules'));
  return [...new Set(dirs)];
}

/** "looked in …" for a name that is not installed, saying why the project's folders were left out. */
function notInstalled(name: string, dirs: string[], ctx: SearchContext): string {
  const why = ctx.trusted ? '' : `; not in the project's node_modules, since ${ctx.projectRoot} is not a trusted folder (keel trust)`;
  return `no package "${name}" is installed (looked in ${dirs.join(', ')}${why})`;
}

/** The file `import(name)` would load: `exports` (import, node, default), else `main`, else index.js. */
export function entryFile(dir: string, pkg: Record<string, unknown>): string {
  const pick = (target: unknown): string | undefined => {
    if (typeof target === 'string') return target;
    if (Array.isArray(target)) return target.map(pick).find(Boolean);
    if (typeof target !== 'object' || target === null) return undefined;
    const t = target as Record<string, unknown>;
    if ('.' in t) return pick(t['.']);
    for (const condition of ['import', 'node', 'default', 'require']) {
      const found = condition in t ? pick(t[condition]) : undefined;
      if (found) return found;
    }
    return undefined;
  };
  const file = path.resolve(dir, pick(pkg.exports) ?? (typeof pkg.main === 'string' ? pkg.main : 'index.js'));
  return [file, `${file}.js`, path.join(file, 'index.js')].find(isFile) ?? file;
}

/** One line from whatever was thrown (a zod error spans many). */
function oneLine(err: unknown): string {
  const text = errorMessage(err).replace(/\s+/g, ' ').trim();
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function fail(message: string, cause?: unknown): KeelError {
  return new KeelError(message, { code: 'config', exitCode: 2, cause });
}

/** What a value is, for "it exports … instead". */
function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return `a function${value.name && value.name !== 'default' ? ` (${value.name})` : ''}`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    return keys.length ? `an object with ${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', …' : ''}` : 'an empty object';
  }
  return `a ${typeof value}`;
}

interface Loaded {
  value: unknown;
  /** What the module exports instead of a default, when it has none. */
  exportsInstead?: string;
  source: Omit<PackageSource, 'kind' | 'provides'>;
}

function dependsOnKeel(pkg: Record<string, unknown>): boolean {
  return ['dependencies', 'peerDependencies', 'devDependencies', 'optionalDependencies'].some((field) => {
    const deps = pkg[field];
    return typeof deps === 'object' && deps !== null && Object.hasOwn(deps, 'keel');
  });
}

/** Imports a package by name from the first folder that has it; undefined when none does. */
async function loadPackage(name: string, dirs: string[], at: string, named: { source: string; key: string }): Promise<Loaded | undefined> {
  const dir = dirs.map((d) => path.join(d, name)).find((d) => isFile(path.join(d, 'package.json')));
  if (!dir) return undefined;
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw fail(`${at}package "${name}" (${dir}): package.json is not valid JSON`, err);
  }
  const file = entryFile(dir, pkg);
  let mod: Record<string, unknown> | undefined;
  try {
    // A package that depends on Keel (a plugin or preset: `keel` as a peer or any dependency), a TypeScript entry,
    // or one that cannot find `keel` from where it is installed loads like agent.config.ts (load-module.ts), its
    // `import 'keel'` being the running Keel, never a second copy from node_modules; other packages load natively.
    mod = /\.[mc]?ts$/.test(file) || dependsOnKeel(pkg)
      ? await importModule(file)
      : ((await nativeImport(pathToFileURL(file).href).catch((err: unknown) => {
          if ((err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && /'keel(\/[\w/-]+)?'/.test(errorMessage(err))) return importModule(file);
          throw err;
        })) as Record<string, unknown>);
  } catch (err) {
    throw fail(`${at}package "${name}" (${dir}) failed to load: ${oneLine(err)}`, err);
  }
  let value: unknown = mod?.default;
  // A CommonJS build of an ES module keeps its default one level down.
  if (typeof value === 'object' && value !== null && (value as { __esModule?: unknown }).__esModule && 'default' in value) value = (value as { default: unknown }).default;
  const exportsInstead = mod && !('default' in mod) ? `no default export (it exports ${Object.keys(mod).join(', ') || 'nothing'})` : undefined;
  return { value, exportsInstead, source: { package: name, version: typeof pkg.version === 'string' ? pkg.version : undefined, path: dir, ...named } };
}

/** A string or `[name, options]` entry of `plugins`: a package that exports a plugin or a plugin factory. */
export function isPackageEntry(entry: unknown): entry is string | unknown[] {
  return typeof entry === 'string' || Array.isArray(entry);
}

export async function pluginFromPackage(entry: string | unknown[], ctx: SearchContext, layer: ConfigLayer, key: string): Promise<{ plugin: Plugin; source: PackageSource }> {
  const at = `${layer.source}: ${key}: `;
  const [name, options] = typeof entry === 'string' ? [entry, undefined] : entry;
  if (typeof name !== 'string' || (Array.isArray(entry) && entry.length > 2)) throw fail(`${at}expected a plugin, "package-name" or ["package-name", options]`);
  if (!PACKAGE_NAME.test(name)) throw fail(`${at}"${name}" is not a package name (expected "keel-plugin-x" or "@scope/keel-plugin-x")`);
  const dirs = searchDirs(ctx, layer);
  const loaded = await loadPackage(name, dirs, at, { source: layer.source, key });
  if (!loaded) throw fail(`${at}${notInstalled(name, dirs, ctx)}`);
  const { value } = loaded;
  let plugin: unknown = value;
  if (typeof value === 'function') {
    try {
      plugin = await (value as (...args: unknown[]) => unknown)(...(options === undefined ? [] : [options]));
    } catch (err) {
      throw fail(`${at}package "${name}": its plugin factory threw${options === undefined ? '' : ' (check the options)'}: ${oneLine(err)}`, err);
    }
  } else if (options !== undefined && typeof value === 'object' && value !== null) {
    throw fail(`${at}package "${name}" exports a plugin object, not a factory, so it takes no options`);
  }
  const problem = pluginProblem(plugin);
  if (problem) {
    const looksLikePlugin = typeof plugin === 'object' && plugin !== null && ['name', 'kernel', 'apply'].some((f) => f in plugin);
    const what = loaded.exportsInstead ?? (typeof value === 'function' ? `its default export is a function that returned ${describe(plugin)}` : `its default export is ${describe(value)}`);
    throw fail(`${at}package "${name}" is not a Keel plugin: ${looksLikePlugin ? problem : `${what}; expected a plugin { name, kernel, apply } or a definePlugin factory`}`);
  }
  const found = plugin as Plugin;
  return { plugin: found, source: { ...loaded.source, kind: 'plugin', provides: found.name } };
}

/** Replaces the package names in a layer's `plugins` by the plugins their packages export. */
export async function resolvePluginNames(layer: ConfigLayer, ctx: SearchContext, found: PackageSource[]): Promise<void> {
  const list = layer.values.plugins;
  if (!Array.isArray(list) || !list.some(isPackageEntry)) return;
  const plugins: unknown[] = [];
  for (const [index, entry] of list.entries()) {
    if (!isPackageEntry(entry)) {
      plugins.push(entry);
      continue;
    }
    const { plugin, source } = await pluginFromPackage(entry, ctx, layer, `plugins.${index}`);
    plugins.push(plugin);
    found.push(source);
  }
  layer.values = { ...layer.values, plugins };
}

/**
 * A preset by package name (the `preset` key, `--preset`, `KEEL_PRESET`, a preset's `extends`): its default
 * export is a preset `{ name, plugins }` (what `definePreset` returns) or a function returning one. Undefined
 * when no package has the name, with the folders searched in `looked`.
 */
export async function presetFromPackage(
  name: string,
  ctx: SearchContext,
  layer: Pick<ConfigLayer, 'kind' | 'source'> | undefined,
  at: string,
  key: string,
): Promise<{ preset: Preset; source: PackageSource } | { looked: string }> {
  if (!PACKAGE_NAME.test(name)) return { looked: `"${name}" is not a package name either` };
  const dirs = searchDirs(ctx, layer);
  const loaded = await loadPackage(name, dirs, at, { source: layer?.source ?? 'default', key });
  if (!loaded) return { looked: notInstalled(name, dirs, ctx) };
  let preset: unknown = loaded.value;
  if (typeof preset === 'function') {
    try {
      preset = await (preset as () => unknown)();
    } catch (err) {
      throw fail(`${at}package "${name}": its preset factory threw: ${oneLine(err)}`, err);
    }
  }
  const p = preset as Partial<Preset> | null;
  if (typeof p !== 'object' || p === null || typeof p.name !== 'string' || !Array.isArray(p.plugins)) {
    const what = typeof loaded.value === 'function' ? `a function that returned ${describe(preset)}` : describe(loaded.value);
    throw fail(`${at}package "${name}" is not a Keel preset: ${loaded.exportsInstead ?? `its default export is ${what}`}; expected a preset { name, plugins } (definePreset)`);
  }
  for (const field of ['plugins', 'replace'] as const) {
    (p[field] ?? []).forEach((plugin, index) => {
      const problem = pluginProblem(plugin);
      if (problem) throw fail(`${at}package "${name}": preset "${p.name}": ${field}.${index}: ${problem}`);
    });
  }
  return { preset: p as Preset, source: { ...loaded.source, kind: 'preset', provides: p.name } };
}
