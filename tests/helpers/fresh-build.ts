/**
 * E2E tests spawn the built `bin/keel.js` (dist/bin/keel.cjs and its snapshot) and config files load `keel` from dist/kernel: a source
 * edited after the last build would be tested in its old form. They refuse to run on a stale build instead.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const SOURCE_DIRS = ['kernel', 'cli', 'plugins', 'presets', 'sdk', 'testing', 'scripts'];
/** What the e2e tests run: the bundle behind bin/keel.js and the library config files import. */
const BUILT = ['dist/bin/keel.cjs', 'dist/kernel/index.js'];

function newestIn(dir: string, found: { file: string; mtimeMs: number }): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newestIn(full, found);
    else if (/\.(ts|tsx|mts)$/.test(entry.name)) {
      const mtimeMs = statSync(full).mtimeMs;
      if (mtimeMs > found.mtimeMs) Object.assign(found, { file: full, mtimeMs });
    }
  }
}

/** Why the build under `root` is stale (a missing output, or a source newer than an output), or undefined. */
export function staleBuild(root: string, sources = SOURCE_DIRS, built = BUILT): string | undefined {
  const newest = { file: '', mtimeMs: 0 };
  for (const dir of sources) if (existsSync(path.join(root, dir))) newestIn(path.join(root, dir), newest);
  for (const output of built) {
    const file = path.join(root, output);
    if (!existsSync(file)) return `${output} is missing`;
    if (statSync(file).mtimeMs < newest.mtimeMs) return `${path.relative(root, newest.file)} is newer than ${output}`;
  }
  return undefined;
}

export function assertFreshBuild(root: string): void {
  const why = staleBuild(root);
  if (why) throw new Error(`the build is stale (${why}): run npm run build before the e2e tests (npm test does)`);
}
