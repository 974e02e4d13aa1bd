/**
 * The checkout must not be trusted: a pull request can change its `agent.config.*`, MCP servers and hooks. A
 * self-hosted runner may keep a `$KEEL_HOME/trusted-folders.json` (from a `keel trust` run by hand) that covers the
 * workspace; Keel would then load the checkout's code. The action refuses to run then, unless the workflow passed
 * `--trust` itself (a workflow on trusted branches only).
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

function canonical(folder: string): string {
  try {
    return realpathSync.native(path.resolve(folder));
  } catch {
    return path.resolve(folder);
  }
}

/** The trust file's entry that covers `workspace`, if any. */
export function runnerTrusts(workspace: string, env: NodeJS.ProcessEnv): { file: string; folder: string } | undefined {
  const home = env.KEEL_HOME ? path.resolve(env.KEEL_HOME) : path.join(homedir(), '.keel');
  const file = path.join(home, 'trusted-folders.json');
  if (!existsSync(file)) return undefined;
  let folders: unknown;
  try {
    folders = (JSON.parse(readFileSync(file, 'utf8')) as { folders?: unknown })?.folders;
  } catch {
    return undefined; // Keel itself stops on a broken trust file, with the reason.
  }
  if (!Array.isArray(folders)) return undefined;
  const target = canonical(workspace);
  for (const folder of folders) {
    if (typeof folder !== 'string') continue;
    const rel = path.relative(canonical(folder), target);
    if (rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))) return { file, folder };
  }
  return undefined;
}
