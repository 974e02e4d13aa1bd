// Builds Keel: the library (tsc → dist/, with types) and the `keel` binary (one esbuild bundle, split
// so heavy modules load only on the paths that use them). Type errors do not stop the build: `npm run
// typecheck` (first in `npm test`) is the gate for those.
import { spawnSync } from 'node:child_process';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
  cwd: root,
  encoding: 'utf8',
});
if (tsc.status !== 0) {
  process.stderr.write(`build: tsc reported type errors (emitted anyway; run npm run typecheck):\n${tsc.stdout}${tsc.stderr}`);
}

// Bundle next to the live binary, then swap, so a running keel never sees a half-written dist/bin.
const staging = path.join(root, 'dist', 'bin.next');
rmSync(staging, { recursive: true, force: true });
const esbuild = await import('esbuild');
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { keel: 'kernel/cli.ts' },
  outdir: staging,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // Resolved from node_modules at run time: jiti loads modules itself.
  // Ink imports react-devtools-core only when DEV=true; it is not installed, and never bundled.
  external: ['jiti', 'typescript', 'react-devtools-core'],
  banner: { js: "import { createRequire as __keelRequire } from 'node:module'; const require = __keelRequire(import.meta.url);" },
  legalComments: 'none',
  minify: process.env.KEEL_NO_MINIFY ? false : true,
  keepNames: true,
  sourcemap: 'linked',
  logLevel: 'warning',
});
const live = path.join(root, 'dist', 'bin');
const old = path.join(root, 'dist', 'bin.old');
rmSync(old, { recursive: true, force: true });
try {
  renameSync(live, old);
} catch {
  // first build: nothing to move aside
}
renameSync(staging, live);
rmSync(old, { recursive: true, force: true });

// The answers `bin/keel.js` gives to a bare `--version` or `--help` without loading the CLI, taken from the CLI
// itself so they can never differ from it.
const fastPath = path.join(root, 'dist', 'fast-path.json');
rmSync(fastPath, { force: true });
const answers = {};
for (const [key, flag] of [['version', '--version'], ['help', '--help']]) {
  const run = spawnSync(process.execPath, [path.join(root, 'bin', 'keel.js'), flag], { cwd: root, encoding: 'utf8', env: { ...process.env, KEEL_NO_FAST_PATH: '1' } });
  if (run.status === 0 && run.stdout) answers[key] = run.stdout;
  else process.stderr.write(`build: keel ${flag} failed (exit ${run.status}); it will load the full CLI\n${run.stderr}`);
}
writeFileSync(fastPath, `${JSON.stringify(answers)}\n`);
