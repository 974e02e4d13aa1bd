/**
 * The entry of the binary's CommonJS build, dist/bin/keel.cjs. Two ways in:
 * - `node bin/keel.js` loads keel.cjs through dist/bin/load.cjs (with its code cache) and calls `run` with its own
 *   `import()`;
 * - the `keel` executable starts Node from dist/bin/keel.blob, a V8 start-up snapshot of this module made by the
 *   build (scripts/binary/snapshot.ts, warm-up.ts): Keel, zod, commander, the Anthropic client and `diff` are
 *   already evaluated, and the main function registered below runs.
 */
import path from 'node:path';
import v8 from 'node:v8';
import { main } from '../../cli/main.js';
import * as kernel from '../../kernel/index.js';
import { bundleFile, setBundleFile } from './bundle-url.js';
import { setHost, type Host } from './host.js';
import { mainContextImporter, preloadForSnapshot, rearmTimers, recordSnapshotBuiltins, refreshRandomUUID } from './snapshot.js';
import { warmUp } from './warm-up.js';
import { restoredFromSnapshot, vendor } from '../vendor-loader.js';

setHost({ kernel: kernel as unknown as Record<string, unknown> });

/** Runs the CLI with `argv` (without node and the script) and sets the exit code. */
export function run(argv: string[], importer: Host['import']): void {
  setHost({ import: importer });
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`keel: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

/**
 * Node 20 restores `console` from a snapshot without its `Console` class (the property reads undefined), which Ink
 * constructs to capture console output. The class as the build saw it, kept here, works after restoring.
 */
const BuiltConsole = console.Console;
function restoreConsole(): void {
  if (typeof console.Console !== 'function' && typeof BuiltConsole === 'function') {
    Object.defineProperty(console, 'Console', { value: BuiltConsole, writable: true, configurable: true, enumerable: true });
  }
}

/**
 * The build's second pass (scripts/build.mjs, "snapshot caches"): `KEEL_BUILD_VENDOR_CACHES` lists each vendor
 * bundle's hash and specifiers; evaluating them here, in a process restored from the snapshot, makes the vendor
 * loader write the caches such a process accepts (to `$KEEL_HOME/code-cache`, a scratch folder of the build's).
 */
function warmVendorsForBuild(): void {
  const list = process.env.KEEL_BUILD_VENDOR_CACHES;
  if (!list) return;
  delete process.env.KEEL_BUILD_VENDOR_CACHES;
  const bundles = JSON.parse(list) as Record<string, { hash: string; specifiers: string[] }>;
  for (const [name, { hash, specifiers }] of Object.entries(bundles)) {
    const table = vendor(name, hash);
    for (const specifier of specifiers) void table[specifier];
  }
}

if (v8.startupSnapshot?.isBuildingSnapshot()) {
  preloadForSnapshot();
  recordSnapshotBuiltins();
  // The builder runs the event loop until it is empty, then takes the snapshot: the warm-up finishes first.
  warmUp().catch((err: unknown) => {
    process.stderr.write(`keel: snapshot warm-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  });
  v8.startupSnapshot.setDeserializeMainFunction(() => {
    // The launcher passes its own resolved path first: keel.cjs is at ../dist/bin/ from it, wherever the package
    // has moved since the build.
    restoreConsole();
    refreshRandomUUID();
    rearmTimers();
    restoredFromSnapshot();
    warmVendorsForBuild();
    const launcher = process.argv[1];
    if (!launcher) {
      process.stderr.write('keel: start Keel with bin/keel.js (the snapshot needs the launcher\'s path as its first argument)\n');
      process.exitCode = 2;
      return;
    }
    process.argv.splice(1, 1, path.resolve(launcher));
    const file = path.join(path.dirname(path.resolve(launcher)), '..', 'dist', 'bin', 'keel.cjs');
    setBundleFile(file);
    run(process.argv.slice(2), mainContextImporter(bundleFile()));
  });
}
