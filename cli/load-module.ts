/** Loads config modules (TypeScript included) through jiti, resolving `keel` to this copy of Keel. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage, KeelError } from '../kernel/errors.js';
import { nativeImport } from './native-import.js';

/** The package root of this copy of Keel (works from sources, dist/ and the bundle). */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (JSON.parse(readFileSync(pkg, 'utf8')).name === 'keel') return dir;
      } catch {
        // not ours; keep climbing
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the keel package root');
    dir = parent;
  }
}

function keelAliases(): Record<string, string> {
  const root = packageRoot();
  const built = path.join(root, 'dist');
  const useBuilt = existsSync(path.join(built, 'kernel', 'index.js'));
  const base = useBuilt ? built : root;
  const ext = useBuilt ? '.js' : '.ts';
  return {
    'keel/presets': path.join(base, 'presets', `index${ext}`),
    'keel/plugins': path.join(base, 'plugins'),
    keel: path.join(base, 'kernel', `index${ext}`),
  };
}

/** Imports a module through jiti (TypeScript included), with `keel` resolving to this copy of Keel. */
export async function importModule(file: string): Promise<Record<string, unknown> | undefined> {
  const { createJiti } = (await nativeImport('jiti')) as unknown as typeof import('jiti');
  const jiti = createJiti(file, { alias: keelAliases(), interopDefault: true, moduleCache: false, fsCache: false });
  return (await jiti.import(file)) as Record<string, unknown> | undefined;
}

/** Imports a config file and returns its default export (or the module's namespace for JSON). */
export async function loadConfigModule(file: string): Promise<Record<string, unknown>> {
  try {
    if (file.endsWith('.json')) return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const mod = await importModule(file);
    const value = mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
    const config = typeof value === 'function' ? await (value as () => unknown)() : value;
    return (config ?? {}) as Record<string, unknown>;
  } catch (err) {
    const where = errorPosition(file, err);
    throw new KeelError(`${file}${where}: failed to load: ${errorMessage(err).split('\n')[0].trim()}`, { code: 'config', exitCode: 2, cause: err });
  }
}

/**
 * ":line:column" of a syntax error (jiti puts "<file>:<line>:<column>", column from 0, on a later line of its
 * message) or of the config's own frame in a runtime error's stack; "" when neither names the file.
 */
/** JSON.parse's "at position N" (Node 20) as [, line, column]. */
function jsonPosition(file: string, message: string): [string, string, string] | undefined {
  const at = /at position (\d+)/.exec(message);
  if (!at || !file.endsWith('.json')) return undefined;
  const before = readFileSync(file, 'utf8').slice(0, Number(at[1])).split('\n');
  return ['', String(before.length), String(before[before.length - 1]!.length + 1)];
}

export function errorPosition(file: string, err: unknown): string {
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const parse = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(errorMessage(err));
  if (parse) return `:${parse[1]}:${Number(parse[2]) + 1}`;
  const json = /line (\d+) column (\d+)/.exec(errorMessage(err)) ?? jsonPosition(file, errorMessage(err));
  if (json) return `:${json[1]}:${json[2]}`;
  const frame = err instanceof Error && err.stack ? new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(err.stack) : null;
  return frame ? `:${frame[1]}:${frame[2]}` : '';
}
