// Builds Keel: the library (tsc → dist/, with types) and the `keel` binary in dist/bin: the CLI as one CommonJS
// bundle (keel.cjs) and its V8 start-up snapshot (keel.blob), the Ink UI bundle (ui/), the plugins' cold parts
// (cold/), the vendor bundles with their code caches (vendor/), and the `--version`/`--help` text
// (dist/fast-path/). See README, "Start-up". Type errors do not stop the build: `npm run typecheck` (first in
// `npm test`) is the gate for those.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSnapshot, builtinImports } from './build-snapshot.mjs';
import { binarySubstitutes, COLD_ENTRY, coldBindings, coldLazyBuiltins, coldLinks, coldLoaders, lazyBuiltins, uiBindings, vendorShims, warmModules, yogaWithoutFetch, zodEnglishOnly } from './build-plugins.mjs';
import { KEEL_NODE_FLAGS, KEEL_SNAPSHOT_FLAGS } from './node-flags.mjs';

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
  core: ['zod', 'commander', 'semver', 'tapable'],
  // The client and the two resources plugins/query-anthropic/client.ts uses, from the SDK's ES modules (see below).
  anthropic: ['@anthropic-ai/sdk/client', '@anthropic-ai/sdk/resources/messages/messages', '@anthropic-ai/sdk/resources/models'],
  'mvdan-sh': ['mvdan-sh'],
  diff: ['diff'],
  yaml: ['yaml'],
  openai: ['openai'],
  'pdf-lib': ['pdf-lib'],
  turndown: ['turndown'],
  // Ajv (with fast-uri), for --json-schema (plugins/structured-output): a bundle of its own, so its 120 KB of source
  // are not in keel.cjs, which the start-up snapshot holds whole (issue 33: every MB of the blob is CPU on every start).
  ajv: ['ajv'],
  // cosmiconfig's Explorer (see cli/config-search.ts): loaded only when a config file exists.
  cosmiconfig: ['cosmiconfig/dist/Explorer.js'],
  // Redis: the client alone for session-store-redis's runs; BullMQ with the same client for `keel fleet`.
  ioredis: ['ioredis'],
  bullmq: ['bullmq'],
  // The MCP client (with ajv): loaded only once a server is configured.
  mcp: [
    '@modelcontextprotocol/sdk/client/index.js',
    '@modelcontextprotocol/sdk/client/sse.js',
    '@modelcontextprotocol/sdk/client/streamableHttp.js',
    '@modelcontextprotocol/sdk/client/auth.js',
    '@modelcontextprotocol/sdk/shared/stdio.js',
    '@modelcontextprotocol/sdk/types.js',
  ],
};
/**
 * Per bundle, globals bound to Keel's own implementations inside that bundle only (no global is touched). The SDK's
 * `Headers` and `FormData`: touching Node 20's global ones loads undici, about 25 ms of a start-up, for a few header
 * lines and an `instanceof` per request.
 */
const VENDOR_BINDINGS = {
  anthropic: { define: { Headers: 'FetchHeaders', FormData: 'FormDataByBrand' }, inject: [path.join(root, 'plugins', 'query-anthropic', 'headers.ts')] },
};
/** The vendor bundles the start-up snapshot holds evaluated (scripts/binary/snapshot.ts preloads the last two). */
const SNAPSHOT_BUNDLES = new Set(['core', 'anthropic', 'diff']);
const vendorDir = path.join(staging, 'vendor');
/** Every Node built-in a bundle imports: the snapshot keeps the code cache of those it does not hold evaluated. */
const runtimeBuiltins = new Set();
const vendorOf = new Map(Object.entries(VENDORS).flatMap(([name, specs]) => specs.map((spec) => [spec, name])));
/**
 * Bundles built from the libraries' ES modules with only the names Keel imports, so esbuild leaves out the rest: the
 * SDK's CommonJS client requires every API resource it has (650 KB bundled), this one the two Keel uses (130 KB).
 */
const ESM_VENDORS = {
  anthropic: { '@anthropic-ai/sdk/client': ['BaseAnthropic'], '@anthropic-ai/sdk/resources/messages/messages': ['Messages'], '@anthropic-ai/sdk/resources/models': ['Models'] },
};
const vendorEntry = (name, specs) =>
  ESM_VENDORS[name]
    ? specs
        .map((s, i) => `import { ${ESM_VENDORS[name][s].map((n) => `${n} as m${i}_${n}`).join(', ')} } from ${JSON.stringify(s)};\nconst m${i} = { ${ESM_VENDORS[name][s].map((n) => `${n}: m${i}_${n}`).join(', ')} };\nexport { m${i} as ${JSON.stringify(s)} };`)
        .join('\n')
    : `module.exports = {\n${specs.map((s) => `  get ${JSON.stringify(s)}() { return require(${JSON.stringify(s)}); },`).join('\n')}\n};\n`;
for (const [name, specs] of Object.entries(VENDORS)) {
  const vendor = await esbuild.build({
    absWorkingDir: root,
    metafile: true,
    stdin: {
      contents: vendorEntry(name, specs),
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
    // Function names are kept (`fn.name`) except in the bundles the start-up snapshot holds: there each kept name
    // is one more property for V8 to restore on every start (about 5 ms in all), and nothing in them reads one.
    keepNames: !SNAPSHOT_BUNDLES.has(name),
    logLevel: 'warning',
    ...VENDOR_BINDINGS[name],
    plugins: name === 'core' ? [zodEnglishOnly] : [],
  });
  for (const builtin of builtinImports(vendor.metafile)) runtimeBuiltins.add(builtin);
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
const binary = path.join(root, 'scripts', 'binary');
const uiDir = path.join(root, 'plugins', 'ui-ink');

// The plugins' cold parts: plugins/<name>/cold.ts, the code that runs only when the plugin's feature is used, each a
// CommonJS bundle of its own in dist/bin/cold/ that keel.cjs loads on first use (scripts/binary/cold.ts), so neither
// keel.cjs nor the start-up snapshot carries it. A cold bundle holds its plugin's cold modules only: it links to
// keel.cjs's kernel, to the plugin's modules keel.cjs holds, and to its vendor loader (one instance of each).
const coldDir = path.join(staging, 'cold');
/**
 * How keel.cjs and the cold bundles are both built: CommonJS for Node 20, with `import()` of bundled modules as lazy
 * requires (neither code from a snapshot nor code run by vm.Script has a module loader for `import()`), and no kept
 * function names (see SNAPSHOT_BUNDLES).
 */
const binaryCjs = {
  absWorkingDir: root,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  supported: { 'dynamic-import': false },
  legalComments: 'none',
  minify: process.env.KEEL_NO_MINIFY ? false : true,
  keepNames: false,
  sourcemap: 'linked',
  logLevel: 'warning',
};
/** Plugin name → the modules of keel.cjs its cold bundle links to (paths relative to the root). */
const coldPlugins = new Map();
/** Plugin name → the Keel modules its cold bundle holds (none may be in keel.cjs: checked below). */
const coldHeld = new Map();
for (const plugin of readdirSync(path.join(root, 'plugins')).filter((name) => existsSync(path.join(root, 'plugins', name, COLD_ENTRY))).sort()) {
  const warm = await warmModules(esbuild, root, plugin);
  const bundle = await esbuild.build({
    ...binaryCjs,
    metafile: true,
    entryPoints: { [plugin]: path.join(root, 'plugins', plugin, COLD_ENTRY) },
    outdir: coldDir,
    // Where keel.cjs lives (dist/bin, the folder above this one), as `import.meta.url` is in keel.cjs.
    define: { 'import.meta.url': '__keelBundleUrl' },
    banner: { js: 'var __keelBundleUrl = require("node:url").pathToFileURL(require("node:path").join(__dirname, "..", "keel.cjs")).href;' },
    // Built-ins load as in keel.cjs: those a restored snapshot does not hold, on first use (but a module that is a
    // class itself, `stream`, as it is: see coldLazyBuiltins).
    plugins: [vendorShims({ root, loader: 'keel-host:scripts/vendor-loader.ts', vendorOf, exportsOf, hashOf }), coldBindings({ root, plugin, warm }), coldLazyBuiltins],
  });
  for (const builtin of builtinImports(bundle.metafile)) runtimeBuiltins.add(builtin);
  coldPlugins.set(plugin, coldLinks(bundle.metafile));
  const [output] = Object.values(bundle.metafile.outputs).filter((o) => o.entryPoint);
  coldHeld.set(plugin, Object.keys(output.inputs).filter((file) => /^(kernel|plugins|presets|scripts)\//.test(file)));
}
// The CLI: one CommonJS file, dist/bin/keel.cjs, so the build can evaluate it into a V8 start-up snapshot
// (dist/bin/keel.blob) that the `keel` executable starts from. Modules imported on first use stay unevaluated
// until then (esbuild's lazy module wrappers), as in an ES module build.
const cli = await esbuild.build({
  ...binaryCjs,
  entryPoints: { keel: path.join(binary, 'entry.ts') },
  outdir: staging,
  // What is not bundled goes through the host's loader (cli/native-import.ts).
  define: { 'import.meta.url': 'keelBundleUrl' },
  inject: [path.join(binary, 'bundle-url.ts')],
  // Node's snapshot builder runs the file with `require`, `__filename` and `__dirname` but no `module`.
  banner: { js: 'var module = typeof module === "object" && module ? module : { exports: {} };' },
  // Resolved from node_modules at run time: jiti loads modules itself.
  external: ['jiti', 'typescript'],
  plugins: [vendorShims({ root, loader, vendorOf, exportsOf, hashOf }), binarySubstitutes(root, binary), coldLoaders({ root, binary, cold: coldPlugins }), lazyBuiltins],
  metafile: true,
});
// Each cold module is in its cold bundle only: keel.cjs bundling one too (a warm module re-exporting it, say) would
// be a second copy of it.
for (const [plugin, files] of coldHeld) {
  const both = files.filter((file) => file in cli.metafile.inputs);
  if (both.length) throw new Error(`build: keel.cjs and cold/${plugin}.cjs both hold ${both.join(', ')}`);
}

if (process.env.KEEL_METAFILE) writeFileSync(process.env.KEEL_METAFILE, JSON.stringify(cli.metafile));
for (const builtin of builtinImports(cli.metafile)) runtimeBuiltins.add(builtin);
hashOf.keel = createHash('sha256').update(readFileSync(path.join(staging, 'keel.cjs'))).digest('hex');
// What `node bin/keel.js` loads keel.cjs with (no snapshot): the vendor loader and its code cache.
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { load: path.join(binary, 'load.ts') },
  outdir: staging,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  define: { KEEL_BUNDLE_HASH: JSON.stringify(hashOf.keel), 'import.meta.url': '__keelLoaderUrl' },
  banner: { js: 'var __keelLoaderUrl = require("node:url").pathToFileURL(__filename).href;' },
  legalComments: 'none',
  logLevel: 'warning',
});

// The Ink UI: an ES module bundle of its own (Ink and yoga use top-level `await`), imported by keel.cjs when the
// interactive mode starts. Keel's kernel module resolves to keel.cjs's instance (host.ts), never a second copy.
const kernelExports = Object.keys(await import(pathToFileURL(path.join(root, 'dist', 'kernel', 'index.js')).href));
const ui = await esbuild.build({
  absWorkingDir: root,
  metafile: true,
  entryPoints: { ink: path.join(uiDir, 'run.tsx') },
  outdir: path.join(staging, 'ui'),
  bundle: true,
  // Split so Ink's devtools module (imported only when DEV=true) stays a chunk of its own and its import of the
  // uninstalled react-devtools-core never runs.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Ink imports react-devtools-core only when DEV=true; it is not installed, and never bundled.
  external: ['react-devtools-core'],
  // React's production builds (react, react-reconciler, the JSX runtime): the development ones check and warn on every
  // render and made drawing a long transcript several times slower.
  define: { 'process.env.NODE_ENV': '"production"' },
  banner: { js: "import { createRequire as __keelRequire } from 'node:module'; const require = __keelRequire(import.meta.url);" },
  legalComments: 'none',
  minify: process.env.KEEL_NO_MINIFY ? false : true,
  keepNames: true,
  sourcemap: 'linked',
  logLevel: 'warning',
  plugins: [uiBindings({ root, uiDir, kernelExports }), yogaWithoutFetch],
});
for (const builtin of builtinImports(ui.metafile)) runtimeBuiltins.add(builtin);
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

// The answers `bin/keel.js` gives to a bare `--version` or `--help` without loading the CLI (dist/fast-path/version
// and help, plain text the launcher's shell lines can print), taken from the CLI itself so they never differ.
const fastPath = path.join(root, 'dist', 'fast-path');
rmSync(fastPath, { recursive: true, force: true });
rmSync(path.join(root, 'dist', 'fast-path.json'), { force: true });
const answers = {};
// These runs also write the code cache of the bundles the CLI loads (keel.cjs itself, core); they ship as
// dist/bin/keel.cache and dist/bin/vendor/<name>.cache.
const scratchHome = mkdtempSync(path.join(tmpdir(), 'keel-build-'));
for (const [key, flag] of [['version', '--version'], ['help', '--help']]) {
  const env = { ...process.env, KEEL_NO_FAST_PATH: '1', KEEL_HOME: scratchHome };
  delete env.KEEL_NO_CODE_CACHE;
  const run = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, path.join(root, 'bin', 'keel.js'), flag], { cwd: root, encoding: 'utf8', env });
  if (run.status === 0 && run.stdout) answers[key] = run.stdout;
  else process.stderr.write(`build: keel ${flag} failed (exit ${run.status}); it will load the full CLI\n${run.stderr}`);
}
mkdirSync(fastPath, { recursive: true });
for (const [key, text] of Object.entries(answers)) writeFileSync(path.join(fastPath, key), text);
const written = path.join(scratchHome, 'code-cache');
// The other bundles' caches: each bundle evaluated in a fresh process (module initialisation, not a run's paths;
// a user's first run on a path writes the richer per-user cache).
for (const name of Object.keys(VENDORS)) {
  if (name === 'core') continue;
  const made = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, path.join(root, 'scripts', 'make-code-cache.cjs'), path.join(live, 'vendor', `${name}.cjs`), JSON.stringify(VENDORS[name])], { encoding: 'utf8' });
  if (made.status !== 0) process.stderr.write(`build: no code cache for vendor/${name}.cjs (it compiles on first use)\n${made.stderr}`);
}
if (existsSync(written)) {
  for (const file of readdirSync(written)) {
    const name = [...Object.keys(VENDORS), 'keel'].find((n) => file.startsWith(`${n}-${hashOf[n].slice(0, 32)}-`));
    if (!name || !file.endsWith('.bin')) continue;
    // keel.cjs's cache lives beside it in dist/bin; the libraries' in dist/bin/vendor.
    const cache = name === 'keel' ? path.join(live, 'keel.cache') : path.join(live, 'vendor', `${name}.cache`);
    copyFileSync(path.join(written, file), cache);
    chmodSync(cache, 0o644);
  }
}
rmSync(scratchHome, { recursive: true, force: true });

buildSnapshot({ root, live, version: answers.version, runtimeBuiltins });
snapshotCaches();

/**
 * The vendor bundles' caches for a process restored from the snapshot (`<name>.snap.cache`; see
 * scripts/vendor-loader.ts): the snapshot itself evaluates them and, where the plain cache is rejected there (Node
 * 22+), writes its own, which become the build's. Where the plain cache serves (Node 20), none is written or needed.
 */
function snapshotCaches() {
  const blob = path.join(live, 'keel.blob');
  if (!existsSync(blob)) return;
  const home = mkdtempSync(path.join(tmpdir(), 'keel-build-'));
  const bundles = Object.fromEntries(Object.keys(VENDORS).map((name) => [name, { hash: hashOf[name], specifiers: VENDORS[name] }]));
  const env = { ...process.env, KEEL_NO_FAST_PATH: '1', KEEL_HOME: home, NODE_OPTIONS: '', KEEL_BUILD_VENDOR_CACHES: JSON.stringify(bundles) };
  delete env.KEEL_NO_CODE_CACHE;
  const run = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '--snapshot-blob', blob, path.join(root, 'bin', 'keel.js'), '--version'], { cwd: root, encoding: 'utf8', env });
  if (run.status !== 0) process.stderr.write(`build: no snapshot code caches (bundles compile on first use from the snapshot)\n${run.stderr}`);
  const dir = path.join(home, 'code-cache');
  for (const name of Object.keys(VENDORS)) rmSync(path.join(live, 'vendor', `${name}.snap.cache`), { force: true });
  if (existsSync(dir)) {
    for (const file of readdirSync(dir)) {
      const name = Object.keys(VENDORS).find((n) => file.startsWith(`${n}-${hashOf[n].slice(0, 32)}-`));
      if (!name || !file.endsWith('.bin')) continue;
      const cache = path.join(live, 'vendor', `${name}.snap.cache`);
      copyFileSync(path.join(dir, file), cache);
      chmodSync(cache, 0o644);
    }
  }
  rmSync(home, { recursive: true, force: true });
}

// The GitHub Action: its entry and its libraries (@actions/core, @octokit/rest) in one CommonJS file that
// GitHub's node24 runner (or plain `node`) runs from the checkout, with no install step of its own.
await esbuild.build({
  absWorkingDir: root,
  entryPoints: [path.join(root, 'integrations', 'github-action', 'src', 'main.ts')],
  outfile: path.join(root, 'integrations', 'github-action', 'dist', 'index.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
});
