// The esbuild plugins scripts/build.mjs bundles the binary with. Each is a small resolver: which module a specifier
// becomes in the binary, and why. With them, what the build reads from the plugins' cold parts' graphs.
import { readFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';

/**
 * zod's locales (326 KB of its 581 KB) only serve `z.config(z.locales.xx())`, which Keel never calls: the bundled
 * `z.locales` holds English alone (the default error messages). Plugins importing `keel` as a library get the full
 * zod from node_modules.
 */
export const zodEnglishOnly = {
  name: 'keel-zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.c?js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'en.cjs'), namespace: 'keel-zod-locales' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'keel-zod-locales' }, (args) => ({
      contents: `exports.en = require(${JSON.stringify(args.path)}).default;`,
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** Resolves a vendor specifier to an ES module shim over the loaded bundle (`loader`: scripts/vendor-loader.ts). */
export const vendorShims = ({ root, loader, vendorOf, exportsOf, hashOf }) => ({
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
});

/** Modules the binary replaces with its own (scripts/binary/*), for code that may run from a start-up snapshot. */
const binarySubstitutesOf = (root, binary) => [
  { importer: path.join(root, 'cli'), spec: './native-import.js', file: path.join(binary, 'native-import.ts') },
  { importer: path.join(root, 'plugins', 'ui-ink'), spec: './load-run.js', file: path.join(binary, 'load-run.ts') },
];
export const binarySubstitutes = (root, binary) => ({
  name: 'keel-binary-substitutes',
  setup(build) {
    build.onResolve({ filter: /^\.\/(native-import|load-run)\.js$/ }, (args) => {
      const hit = binarySubstitutesOf(root, binary).find((s) => s.spec === args.path && path.dirname(args.importer) === s.importer);
      return hit ? { path: hit.file } : undefined;
    });
  },
});

/**
 * Node built-ins keel.cjs loads on first use rather than at module load: Node's snapshot builder cannot load some
 * (node:http throws there on Node 20) and does not vouch for the state of others after restoring. The modules a
 * snapshot may hold as evaluated are these; every other built-in becomes an object of getters that requires the
 * real module when a property is first read, at run time.
 */
const SNAPSHOT_SAFE_BUILTINS = new Set(['assert', 'buffer', 'crypto', 'events', 'fs', 'fs/promises', 'os', 'path', 'querystring', 'string_decoder', 'url', 'util', 'v8']);
const requireHere = createRequire(import.meta.url);
/**
 * `functionsAsIs`: a built-in whose module is itself a function (`stream`, `events`: the class) cannot be an object
 * of getters — a library that extends it (`util.inherits(DataStream, require('stream'))`, as google-auth-library's
 * JWS signing does) needs the real one. Bundles never held by the snapshot (the cold parts) require those as they are.
 */
const lazyBuiltinsWith = ({ functionsAsIs }) => ({
  name: 'keel-lazy-builtins',
  setup(build) {
    build.onResolve({ filter: /^(node:)?[a-z_/0-9]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (!builtinModules.includes(name) || SNAPSHOT_SAFE_BUILTINS.has(name) || args.namespace === 'keel-lazy-builtin') return undefined;
      return { path: name, namespace: 'keel-lazy-builtin' };
    });
    build.onLoad({ filter: /.*/, namespace: 'keel-lazy-builtin' }, (args) => {
      const real = requireHere(`node:${args.path}`);
      if (functionsAsIs && typeof real === 'function') return { contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`, loader: 'js' };
      const keys = Object.keys(real);
      return {
        contents: [
          `let real;`,
          `const load = () => (real ??= require(${JSON.stringify(`node:${args.path}`)}));`,
          `for (const key of ${JSON.stringify(keys)}) Object.defineProperty(exports, key, { enumerable: true, get: () => load()[key] });`,
        ].join('\n'),
        loader: 'js',
      };
    });
  },
});
export const lazyBuiltins = lazyBuiltinsWith({ functionsAsIs: false });
export const coldLazyBuiltins = lazyBuiltinsWith({ functionsAsIs: true });

/**
 * The Ink UI bundle's imports of Keel: kernel/index.js becomes keel.cjs's instance (`kernelExports`: its export names),
 * and any other Keel module outside plugins/ui-ink is refused (it would be a second copy of its state).
 */
export const uiBindings = ({ root, uiDir, kernelExports }) => ({
  name: 'keel-ui-bindings',
  setup(build) {
    const kernelIndex = path.join(root, 'kernel', 'index.js');
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      const target = path.resolve(path.dirname(args.importer), args.path);
      if (target === kernelIndex) return { path: 'kernel', namespace: 'keel-host' };
      if (args.importer.startsWith(root + path.sep + 'node_modules') || target.startsWith(uiDir + path.sep)) return undefined;
      return { errors: [{ text: `the Ink UI bundle may import Keel only through kernel/index.js, not ${path.relative(root, target)} (a second copy of its state)` }] };
    });
    build.onLoad({ filter: /.*/, namespace: 'keel-host' }, () => ({
      contents: [
        `const k = globalThis[Symbol.for('keel.binary.host')].kernel;`,
        ...kernelExports.map((name) => `export const ${name} = k.${name};`),
      ].join('\n'),
      loader: 'js',
    }));
  },
});

/**
 * yoga-layout's Emscripten loader fetches its own wasm, a base64 `data:` URL, with `fetch` whenever a global `fetch`
 * exists: on Node that loads undici (Node's fetch, 25 ms and more at every start of the Ink UI) only to decode base64.
 * A module-scope `fetch` that is undefined sends the loader down its own decoding path.
 */
export const yogaWithoutFetch = {
  name: 'keel-yoga-without-fetch',
  setup(build) {
    build.onLoad({ filter: /[\\/]yoga-layout[\\/]dist[\\/]binaries[\\/]yoga-wasm-base64-esm\.js$/ }, async (args) => ({
      contents: `var fetch = undefined;\n${await readFile(args.path, 'utf8')}`,
      loader: 'js',
    }));
  },
};

/** A plugin's cold part: plugins/<name>/cold.ts (see scripts/binary/cold.ts). */
export const COLD_ENTRY = 'cold.ts';
/** The id prefix under which a cold bundle imports a module of keel.cjs (scripts/binary/cold.ts). */
const LINK = 'keel-host:';
const posixPath = (p) => p.split(path.sep).join('/');

/**
 * keel.cjs's side of the cold parts: in a plugin of `cold` (name → the modules its cold bundle links to, as paths
 * relative to `root`), `import('./cold.js')` becomes a module that loads dist/bin/cold/<name>.cjs on first use
 * (scripts/binary/cold.ts) and hands it those modules. Any other import of ./cold.js is refused: it would load the
 * cold part with the plugin, or put it back into keel.cjs.
 */
export const coldLoaders = ({ root, binary, cold }) => ({
  name: 'keel-cold-loaders',
  setup(build) {
    build.onResolve({ filter: /^\.\/cold\.js$/ }, (args) => {
      const dir = path.dirname(args.importer);
      const name = path.basename(dir);
      if (dir !== path.join(root, 'plugins', name) || !cold.has(name)) return undefined;
      if (args.kind !== 'dynamic-import') {
        return { errors: [{ text: `${posixPath(path.relative(root, args.importer))} imports ./cold.js statically: a plugin's cold part is loaded with import() only, on first use` }] };
      }
      return { path: name, namespace: 'keel-cold' };
    });
    build.onLoad({ filter: /.*/, namespace: 'keel-cold' }, (args) => ({
      contents: [
        `const { loadCold } = require(${JSON.stringify(path.join(binary, 'cold.ts'))});`,
        `module.exports = loadCold(${JSON.stringify(args.path)}, {`,
        ...cold.get(args.path).map((rel) => `  ${JSON.stringify(rel)}: () => require(${JSON.stringify(path.join(root, rel))}),`),
        `});`,
      ].join('\n'),
      loader: 'js',
      resolveDir: root,
    }));
  },
});

/**
 * The modules of `plugin` that keel.cjs holds, as paths relative to `root`: what its index.ts imports, without
 * ./cold.js, the kernel and packages. A cold bundle links to these rather than holding a copy.
 */
export async function warmModules(esbuild, root, plugin) {
  const dir = path.join(root, 'plugins', plugin);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(dir, 'index.ts')],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    plugins: [
      {
        name: 'keel-warm-only',
        setup(build) {
          build.onResolve({ filter: /^\.\.?\// }, (args) => {
            if (args.path === './cold.js' && path.dirname(args.importer) === dir) return { path: args.path, external: true };
            const target = path.resolve(args.resolveDir, args.path);
            return target.startsWith(dir + path.sep) ? undefined : { path: args.path, external: true };
          });
        },
      },
    ],
  });
  return new Set(Object.keys(result.metafile.inputs).filter((file) => file.startsWith(`plugins/${plugin}/`)));
}

/**
 * A cold bundle's imports: its plugin's cold modules are bundled; kernel/index.js, the plugin's modules keel.cjs
 * holds (`warm`) and the vendor loader (`loader`, for the vendor shims) are keel.cjs's instances, reached through
 * `keel-host:` ids (scripts/binary/cold.ts); any other Keel module is refused (a second copy of its state).
 * Packages other than the vendor bundles' are bundled in.
 */
export const coldBindings = ({ root, plugin, warm }) => ({
  name: 'keel-cold-bindings',
  setup(build) {
    const dir = path.join(root, 'plugins', plugin);
    const linked = new Set(['kernel/index.ts', ...warm]);
    build.onResolve({ filter: /^keel-host:/ }, (args) => ({ path: args.path, external: true }));
    build.onResolve({ filter: /^\.\.?\// }, async (args) => {
      if (args.pluginData?.keelCold || args.importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { keelCold: true } });
      if (resolved.errors.length) return { errors: resolved.errors };
      const rel = posixPath(path.relative(root, resolved.path));
      if (linked.has(rel)) return { path: `${LINK}${rel}`, external: true };
      if (resolved.path.startsWith(dir + path.sep)) return { path: resolved.path };
      return { errors: [{ text: `the cold part of ${plugin} may import Keel only through kernel/index.js and its own folder, not ${rel} (a second copy of its state)` }] };
    });
  },
});

/** The `keel-host:` modules a cold bundle's metafile says it imports, as paths relative to the root. */
export function coldLinks(metafile) {
  const links = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const { path: spec, external } of output.imports) if (external && spec.startsWith(LINK)) links.add(spec.slice(LINK.length));
  }
  return [...links].sort();
}
