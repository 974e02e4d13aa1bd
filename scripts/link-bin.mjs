/**
 * After `npm install` in a clone (the `prepare` script), links `node_modules/.bin/keel` to `bin/keel.js`, so
 * `npx keel` finds Keel's own binary at once. Without it npx finds no local `keel`, installs the project folder
 * into its cache as a dependency and builds it there again (about 20 s on the first run). npm never links a
 * package's own bin into its own node_modules; this does, and only that.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binDir = path.join(root, 'node_modules', '.bin');
const link = path.join(binDir, 'keel');
const target = path.relative(binDir, path.join(root, 'bin', 'keel.js'));

// Installed as a dependency (no node_modules of its own), or on Windows (npm writes .cmd shims there): nothing to do.
if (process.platform !== 'win32' && existsSync(path.join(root, 'node_modules'))) {
  mkdirSync(binDir, { recursive: true });
  let current;
  try {
    current = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : 'not a link';
  } catch {
    current = undefined;
  }
  if (current !== target) {
    if (current !== undefined) rmSync(link, { force: true });
    symlinkSync(target, link);
  }
  chmodSync(path.join(root, 'bin', 'keel.js'), 0o755);
}
