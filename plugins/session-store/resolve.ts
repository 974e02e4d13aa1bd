/** Finds the session file a `--resume <id>` or `--continue` means, with one-line errors when there is none. */
import { existsSync } from 'node:fs';
import { KeelError } from '../../kernel/index.js';
import { pickable, sessionFiles } from './list.js';
import { summarize } from './reader.js';
import { SESSION_ID, sessionFile } from './paths.js';

/** A `--resume`/`--continue` that names no session: a usage error, shown as its own one line (exit 2). */
export class ResumeError extends KeelError {
  constructor(message: string) {
    super(message, { code: 'resume', exitCode: 2 });
    this.name = 'ResumeError';
  }
}

/** An exact id, or a unique prefix of one (as `keel sessions` shows them). */
export function resolveSessionId(dir: string, wanted: string): string {
  if (!SESSION_ID.test(wanted)) throw new ResumeError(`--resume: "${wanted}" is not a session id (letters, digits, "-" and "_" only)`);
  if (existsSync(sessionFile(dir, wanted))) return wanted;
  const matches = sessionFiles(dir).filter((entry) => entry.id.startsWith(wanted));
  if (matches.length === 1) return matches[0].id;
  if (matches.length > 1) {
    throw new ResumeError(`--resume: "${wanted}" matches ${matches.length} sessions (${matches.slice(0, 3).map((m) => m.id).join(', ')}…); give more of the id`);
  }
  throw new ResumeError(`--resume: no session "${wanted}" in this project (run keel sessions to list them)`);
}

/**
 * `--continue`: the newest session a person would pick. A sub-agent's session (its header names a parent) or one
 * without a model turn is never it, so a parent killed while its sub-agent ran continues the parent's own.
 */
export async function newestSessionId(dir: string): Promise<string> {
  const files = sessionFiles(dir);
  for (const entry of files) {
    if (pickable(await summarize(entry.file, entry.id, entry.mtime, entry.bytes))) return entry.id;
  }
  if (files.length === 0) throw new ResumeError('--continue: this project has no session to continue yet');
  throw new ResumeError(`--continue: this project has no session of its own to continue (only ${files.length} sub-agent or empty one${files.length > 1 ? 's' : ''}; keel sessions --all lists them, --resume <id> opens one)`);
}
