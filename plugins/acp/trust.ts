/**
 * Whether a session's project is trusted. `keel acp` resolved its configuration, trust included, for the folder the
 * editor started it in; a session the editor opens elsewhere (a repository just cloned) must not inherit that
 * trust, or the folder's custom commands, skills and sub-agents (`--trust`, which loads its `agent.config.*`)
 * would run its code. The trust file is the one `keel trust` writes (cli/trust.ts), read here because plugins do not
 * import the CLI: `$KEEL_HOME/trusted-folders.json`, `{ "folders": ["/abs/path", …] }`, each covering its subfolders.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { Kernel } from '../../kernel/index.js';

function canonical(folder: string): string {
  try {
    return realpathSync.native(path.resolve(folder));
  } catch {
    return path.resolve(folder);
  }
}

function inside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function trustedFolders(keelHome: string): string[] {
  const file = path.join(keelHome, 'trusted-folders.json');
  if (!existsSync(file)) return [];
  let folders: unknown;
  try {
    folders = (JSON.parse(readFileSync(file, 'utf8')) as { folders?: unknown })?.folders;
  } catch {
    throw new Error(`${file}: not valid JSON (expected { "folders": ["/abs/path"] }); fix or delete it`);
  }
  if (!Array.isArray(folders) || !folders.every((f) => typeof f === 'string')) throw new Error(`${file}: folders: expected an array of absolute paths`);
  return folders as string[];
}

/** The trust of a session whose project is `projectRoot`: the launch folder's inside it, else the trust file's. */
export function sessionTrust(base: Kernel, projectRoot: string): boolean {
  if (inside(canonical(base.config.projectRoot), canonical(projectRoot))) return base.config.trusted !== false;
  const target = canonical(projectRoot);
  return trustedFolders(base.config.keelHome).some((folder) => inside(canonical(folder), target));
}
