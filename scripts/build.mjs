// Builds Keel: the library (tsc → dist/, with types) and the `keel` binary (one esbuild bundle, split
// so heavy modules load only on the paths that use them).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
rmSync(path.join(root, 'dist'), { recursive: true, force: true });

execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });

const esbuild = await import('esbuild');
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { keel: 'kernel/cli.ts' },
  outdir: 'dist/bin',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // Loaded from node_modules on the paths that need them: jiti and cosmiconfig resolve modules at run time.
  external: ['jiti', 'cosmiconfig', 'typescript'],
  banner: { js: "import { createRequire as __keelRequire } from 'node:module'; const require = __keelRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
  metafile: false,
});
