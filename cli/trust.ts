/**
 * Folder trust. A project's `agent.config.ts` is code, and its MCP servers and hooks run programs: none of it
 * is loaded before the user trusts the folder. Trusted folders are kept in `$KEEL_HOME/trusted-folders.json`
 * (`{ "folders": ["/abs/path", …] }`); trusting a folder trusts everything below it.
 */
import { existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureDir } from '../kernel/ensure-dir.js';
import { KeelError } from '../kernel/errors.js';
import type { TrustPrompt } from '../kernel/types.js';

export const TRUST_FILE = 'trusted-folders.json';

function canonical(folder: string): string {
  const abs = path.resolve(folder);
  try {
    return realpathSync.native(abs);
  } catch {
    return abs;
  }
}

export function trustFile(home: string): string {
  return path.join(home, TRUST_FILE);
}

export function trustedFolders(home: string): string[] {
  const file = trustFile(home);
  if (!existsSync(file)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new KeelError(`${file}: not valid JSON (expected { "folders": ["/abs/path"] }); fix or delete it`, { code: 'config', exitCode: 2 });
  }
  const folders = (parsed as { folders?: unknown })?.folders;
  if (!Array.isArray(folders) || !folders.every((f) => typeof f === 'string')) {
    throw new KeelError(`${file}: folders: expected an array of absolute paths`, { code: 'config', exitCode: 2 });
  }
  return folders as string[];
}

/** True when `folder` or one of its ancestors is trusted. */
export function isTrusted(home: string, folder: string): boolean {
  const target = canonical(folder);
  return trustedFolders(home).some((trusted) => {
    const rel = path.relative(canonical(trusted), target);
    return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
  });
}

/** Remembers `folder` as trusted. Returns the file written. */
export function trustFolder(home: string, folder: string): string {
  const target = canonical(folder);
  const folders = trustedFolders(home);
  const file = trustFile(home);
  if (folders.includes(target)) return file;
  ensureDir(home);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ folders: [...folders, target] }, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

/**
 * Whether the project's own code and settings may load: `--trust` (this run only), a remembered folder, or the
 * user's answer to `ask` (remembered when yes). Without a way to ask, an unknown folder is not trusted.
 */
export async function resolveTrust(opts: { home: string; folder: string; flag?: boolean; files: string[]; ask?: TrustPrompt }): Promise<boolean> {
  if (opts.flag) return true;
  if (isTrusted(opts.home, opts.folder)) return true;
  if (!opts.ask || opts.files.length === 0) return false;
  const yes = await opts.ask({ folder: canonical(opts.folder), files: opts.files });
  if (yes) trustFolder(opts.home, opts.folder);
  return yes;
}

export function untrustedWarning(folder: string, files: string[]): string {
  return `keel: warning: ${folder} is not a trusted folder, so its project settings were not loaded (${files.join(', ')}); pass --trust to trust it for this run, or run keel trust to remember it\n`;
}
