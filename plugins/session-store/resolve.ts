/** Finds the session file a `--resume <id>` or `--continue` means, with one-line errors when there is none. */
import { existsSync } from 'node:fs';
import { KeelError } from '../../kernel/index.js';
import { sessionFiles } from './list.js';
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

export function newestSessionId(dir: string): string {
  const newest = sessionFiles(dir)[0];
  if (!newest) throw new ResumeError('--continue: this project has no session to continue yet');
  return newest.id;
}
