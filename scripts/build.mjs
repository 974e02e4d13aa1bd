// Builds Keel: the library (tsc → dist/, with types) and the `keel` binary (one esbuild bundle, split
// so heavy modules load only on the paths that use them). Type errors do not stop the build: `npm run
// typecheck` (first in `npm test`) is the gate for those.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

// Vendor bundles: the big third-party libraries as CommonJS files in dist/bin/vendor/, which
// scripts/vendor-loader.ts runs through `vm.Script` with a V8 code cache (Node 20 caches no ES module code).
// Each is loaded on first import, as before: `core` with the kernel, the others on the paths that use them.
// A bundle's table exposes each specifier through a getter, so `zod/v3` is evaluated only if imported.
const VENDORS = {
  core: ['zod', 'zod/v3', 'zod/v4', 'zod/v4-mini', 'commander', 'semver', 'tapable'],
  anthropic: ['@anthropic-ai/sdk'],
  'mvdan-sh': ['mvdan-sh'],
  diff: ['diff'],
  yaml: ['yaml'],
  openai: ['openai'],
  'pdf-lib': ['pdf-lib'],
  turndown: ['turndown'],
};
/**
 * Per bundle, globals bound to Keel's own implementations inside that bundle only (no global is touched). The SDK's
 * `Headers` and `FormData`: touching Node 20's global ones loads undici, about 25 ms of a start-up, for a few header
 * lines and an `instanceof` per request.
 */
const VENDOR_BINDINGS = {
  anthropic: { define: { Headers: 'FetchHeaders', FormData: 'FormDataByBrand' }, inject: [path.join(root, 'plugins', 'query-anthropic', 'headers.ts')] },
};
const vendorDir = path.join(staging, 'vendor');
const vendorOf = new Map(Object.entries(VENDORS).flatMap(([name, specs]) => specs.map((spec) => [spec, name])));
for (const [name, specs] of Object.entries(VENDORS)) {
  await esbuild.build({
    absWorkingDir: root,
    stdin: {
      contents: `module.exports = {\n${specs.map((s) => `  get ${JSON.stringify(s)}() { return require(${JSON.stringify(s)}); },`).join('\n')}\n};\n`,
      resolveDir: root,
      sourcefile: `vendor-${name}.cjs`,
      loader: 'js',
    },
    outfile: path.join(vendorDir, `${name}.cjs`),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    legalComments: 'none',
    minify: process.env.KEEL_NO_MINIFY ? false : true,
    keepNames: true,
    logLevel: 'warning',
    ...VENDOR_BINDINGS[name],
  });
}
// What each specifier exports, read from the built bundle (the ES module shims re-export these names).
const shape = spawnSync(
  process.execPath,
  [
    '-e',
    `const out = {};
for (const [name, specs] of Object.entries(${JSON.stringify(VENDORS)})) {
  const table = require(${JSON.stringify(vendorDir)} + '/' + name + '.cjs');
  for (const spec of specs) { const m = table[spec]; out[spec] = { esModule: !!(m && m.__esModule), keys: Object.keys(m).filter((k) => k !== 'default' && k !== '__esModule') }; }
}
process.stdout.write(JSON.stringify(out));`,
  ],
  { encoding: 'utf8' },
);
if (shape.status !== 0) throw new Error(`build: cannot read the vendor bundles' exports:\n${shape.stderr}`);
const exportsOf = JSON.parse(shape.stdout);
const hashOf = Object.fromEntries(Object.keys(VENDORS).map((name) => [name, createHash('sha256').update(readFileSync(path.join(vendorDir, `${name}.cjs`))).digest('hex')]));
const loader = path.join(root, 'scripts', 'vendor-loader.ts');
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** Resolves a vendor specifier to an ES module shim over the loaded bundle. */
const vendorShims = {
  name: 'keel-vendor',
  setup(build) {
    build.onResolve({ filter: /^[@a-z]/ }, (args) => (vendorOf.has(args.path) ? { path: args.path, namespace: 'keel-vendor' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'keel-vendor' }, (args) => {
      const name = vendorOf.get(args.path);
      const { esModule, keys } = exportsOf[args.path];
      const names = keys.map((key, i) => `_${i} as ${IDENTIFIER.test(key) ? key : JSON.stringify(key)}`);
      const contents = [
        `import { vendor } from ${JSON.stringify(loader)};`,
        `const m = vendor(${JSON.stringify(name)}, ${JSON.stringify(hashOf[name])})[${JSON.stringify(args.path)}];`,
        `export default ${esModule ? 'm.default' : 'm'};`,
        ...keys.map((key, i) => `const _${i} = m[${JSON.stringify(key)}];`),
        names.length ? `export { ${names.join(', ')} };` : '',
      ].join('\n');
      return { contents, loader: 'js', resolveDir: root };
    });
  },
};

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
  plugins: [vendorShims],
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
// These runs also write the code cache of the bundles the CLI loads (core); it ships as dist/bin/vendor/<name>.cache.
const scratchHome = mkdtempSync(path.join(tmpdir(), 'keel-build-'));
for (const [key, flag] of [['version', '--version'], ['help', '--help']]) {
  const env = { ...process.env, KEEL_NO_FAST_PATH: '1', KEEL_HOME: scratchHome };
  delete env.KEEL_NO_CODE_CACHE;
  const run = spawnSync(process.execPath, [path.join(root, 'bin', 'keel.js'), flag], { cwd: root, encoding: 'utf8', env });
  if (run.status === 0 && run.stdout) answers[key] = run.stdout;
  else process.stderr.write(`build: keel ${flag} failed (exit ${run.status}); it will load the full CLI\n${run.stderr}`);
}
writeFileSync(fastPath, `${JSON.stringify(answers)}\n`);
const written = path.join(scratchHome, 'code-cache');
// The other bundles' caches: each bundle evaluated in a fresh process (module initialisation, not a run's paths;
// a user's first run on a path writes the richer per-user cache).
for (const name of Object.keys(VENDORS)) {
  if (name === 'core') continue;
  const made = spawnSync(process.execPath, [path.join(root, 'scripts', 'make-code-cache.cjs'), path.join(live, 'vendor', `${name}.cjs`), JSON.stringify(VENDORS[name])], { encoding: 'utf8' });
  if (made.status !== 0) process.stderr.write(`build: no code cache for vendor/${name}.cjs (it compiles on first use)\n${made.stderr}`);
}
if (existsSync(written)) {
  for (const file of readdirSync(written)) {
    const name = Object.keys(VENDORS).find((n) => file.startsWith(`${n}-${hashOf[n].slice(0, 32)}-`));
    if (!name || !file.endsWith('.bin')) continue;
    copyFileSync(path.join(written, file), path.join(live, 'vendor', `${name}.cache`));
    chmodSync(path.join(live, 'vendor', `${name}.cache`), 0o644);
  }
}
rmSync(scratchHome, { recursive: true, force: true });
