/** Loads config modules (TypeScript included), resolving `keel` to the running Keel. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { errorMessage, KeelError } from '../kernel/errors.js';
import { nativeImport } from './native-import.js';
import { keelHome } from './config-files.js';
import { isTypeScript, ModuleGraph } from './module-graph.js';
import { KEEL_VERSION } from './program.js';
import { TranspileCache } from './transpile-cache.js';


let jiti: ReturnType<typeof import('jiti').createJiti> | undefined;

/** TypeScript or an ES module to the async CommonJS form ModuleGraph runs (jiti's Babel transform, on a cache miss only). */
async function transform(source: string, file: string): Promise<string> {
  if (!jiti) {
    const { createJiti } = (await nativeImport('jiti')) as unknown as typeof import('jiti');
    jiti = createJiti(file, { interopDefault: true, moduleCache: false, fsCache: false });
  }
  const code = jiti.transform({ source, filename: file, ts: isTypeScript(file), async: true });
  // jiti answers a syntax error with code that throws it; raised here instead, so that it is never cached.
  const failed = /^exports\.__JITI_ERROR__ = (.*)$/s.exec(code);
  if (failed) {
    const { line, column, code: kind, message } = JSON.parse(failed[1]!) as { line: number; column: number; code: string; message: string };
    throw new SyntaxError(`${kind}: ${message.trim()}\n    at ${file}:${line}:${column}`);
  }
  return code;
}

/** The transpile cache in `$KEEL_HOME/cache/transpiled` (none with `KEEL_NO_TRANSPILE_CACHE=1`). */
function transpileCache(): TranspileCache | undefined {
  if (process.env.KEEL_NO_TRANSPILE_CACHE === '1') return undefined;
  return new TranspileCache(path.join(keelHome(), 'cache', 'transpiled'), KEEL_VERSION);
}

/**
 * Imports a module (TypeScript included) with `keel` resolving to the running Keel (see module-graph.ts); the
 * transformed code is cached in `$KEEL_HOME`.
 */
export async function importModule(file: string): Promise<Record<string, unknown> | undefined> {
  return new ModuleGraph(transpileCache(), transform).load(path.resolve(file));
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
 * ":line:column" of a syntax error (`transform` puts "<file>:<line>:<column>", column from 0, on a later line of its
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
