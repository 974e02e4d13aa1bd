/**
 * How `node bin/keel.js` (the start without the snapshot) loads dist/bin/keel.cjs: through the vendor loader, with
 * the build's V8 code cache (dist/bin/keel.cache) or a per-user one, so that path does not compile the CLI's
 * 500 KB from source on every run. Built by scripts/build.mjs as dist/bin/load.cjs; `KEEL_BUNDLE_HASH` is the
 * SHA-256 of the keel.cjs it was built with.
 */
import { homedir } from 'node:os';
import path from 'node:path';
import { loadBundle } from '../vendor-loader.js';

declare const KEEL_BUNDLE_HASH: string;

export function loadKeel(): { run(argv: string[], importer: (specifier: string) => Promise<unknown>): void } {
  const off = process.env.KEEL_NO_CODE_CACHE === '1';
  const home = process.env.KEEL_HOME ? path.resolve(process.env.KEEL_HOME) : path.join(homedir(), '.keel');
  const exports = loadBundle('keel', KEEL_BUNDLE_HASH, { dir: __dirname, userCacheDir: off ? undefined : path.join(home, 'code-cache') }, !off);
  return exports as unknown as ReturnType<typeof loadKeel>;
}
