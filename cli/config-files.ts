/**
 * Where config files are: `$KEEL_HOME`, the project root (the nearest folder holding `.git`) and Keel's config
 * module names, searched from the working folder up to the project root, never above.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { KeelError } from '../kernel/errors.js';

export function keelHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.KEEL_HOME ? path.resolve(env.KEEL_HOME) : path.join(homedir(), '.keel');
}

/** The nearest ancestor holding `.git`, else `cwd` itself. */
export function findProjectRoot(cwd: string): string {
  let dir = path.resolve(cwd);
  for (;;) {
    if (existsSync(path.join(dir, '.git'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(cwd);
    dir = parent;
  }
}

/** Keel's config module names, in the order they are looked for in each folder. Nothing else is searched. */
export const CONFIG_FILES = [
  'agent.config.ts',
  'agent.config.mts',
  'agent.config.cts',
  'agent.config.js',
  'agent.config.mjs',
  'agent.config.cjs',
  'agent.config.json',
];

export interface ConfigFileLoader {
  /** Loads a config module (TypeScript included, see load-module.ts). Throws a KeelError naming the file on failure. */
  (file: string): Promise<Record<string, unknown>>;
}

export function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Finds `agent.config.*` from `cwd` up to `projectRoot` (never above it), or checks `explicit` (`--config`).
 * Only names are looked at: nothing is read or run here, so the search is safe before the folder is trusted.
 */
export function findProjectConfig(cwd: string, projectRoot: string, explicit?: string): string | undefined {
  if (explicit) {
    const file = path.resolve(cwd, explicit);
    if (!isFile(file)) throw new KeelError(`--config: no such file: ${file}`, { code: 'config', exitCode: 2 });
    return file;
  }
  const root = path.resolve(projectRoot);
  let dir = path.resolve(cwd);
  for (;;) {
    const found = CONFIG_FILES.map((name) => path.join(dir, name)).find(isFile);
    if (found) return found;
    const parent = path.dirname(dir);
    // A cwd outside the root (never from findProjectRoot) searches only itself.
    const rel = path.relative(root, dir);
    if (dir === root || parent === dir || rel === '..' || rel.startsWith(`..${path.sep}`)) return undefined;
    dir = parent;
  }
}

/** The user's config in `$KEEL_HOME`, if any. */
export function findUserConfig(home: string): string | undefined {
  return CONFIG_FILES.map((name) => path.join(home, name)).find(isFile);
}
