/** Creates a folder Keel writes to, naming the real cause when it cannot (Node's recursive mkdir says ENOENT). */
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { errorMessage, KeelError } from './errors.js';

/** Returns the first folder it had to create, like `mkdirSync(…, { recursive: true })`. */
export function ensureDir(dir: string, mode = 0o700): string | undefined {
  try {
    return mkdirSync(dir, { recursive: true, mode });
  } catch (err) {
    throw new KeelError(`cannot create ${dir}: ${whyNotWritable(dir) ?? errorMessage(err)}`, { code: 'fs', cause: err });
  }
}

/** Why `dir` cannot be created: its nearest existing ancestor is read-only (EROFS) or not writable (EACCES). */
export function whyNotWritable(dir: string): string | undefined {
  let existing = path.resolve(dir);
  while (!existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  try {
    accessSync(existing, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return `${existing} is on a read-only file system (EROFS)`;
    if (code === 'EACCES' || code === 'EPERM') return `${existing} is not writable by this user (${code})`;
    return `${existing}: ${errorMessage(err)}`;
  }
  return undefined;
}
