import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The `keel` launcher to spawn a sub-agent with: `bin/keel.js` of the package this module belongs to (from
 * the bundle, `dist/`, or the sources), else the script the process was started with.
 */
export function keelCli(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const bin = path.join(dir, 'bin', 'keel.js');
    if (existsSync(bin) && existsSync(path.join(dir, 'package.json'))) return bin;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  if (process.argv[1]) return process.argv[1];
  throw new Error('cannot find the keel launcher (bin/keel.js) to start a sub-agent');
}

/**
 * The Node flags a sub-agent starts with: those bin/keel.js started this process with, the start-up snapshot (the
 * same Node and the same blob, so the child can use it too) and the V8 flags the snapshot was made under (Node
 * refuses a snapshot under other flags). `--no-rehash-snapshot` goes only with the snapshot (scripts/node-flags.mjs).
 * Anything else (an inspector, a profiler) is not passed on.
 */
export function launchFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const flags = execArgv.filter((a) => a.startsWith('--max-semi-space-size='));
  const at = execArgv.findIndex((a) => a === '--snapshot-blob' || a.startsWith('--snapshot-blob='));
  if (at >= 0) {
    if (execArgv.includes('--no-rehash-snapshot')) flags.push('--no-rehash-snapshot');
    flags.push(...(execArgv[at].includes('=') ? [execArgv[at]] : execArgv.slice(at, at + 2)));
  }
  return flags;
}
