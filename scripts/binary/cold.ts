/**
 * Loads a plugin's cold part in the binary: `plugins/<name>/cold.ts`, the code that runs only when the plugin's
 * feature is used, which scripts/build.mjs bundles apart as dist/bin/cold/<name>.cjs so that keel.cjs and its
 * start-up snapshot do not carry it. keel.cjs's `import('./cold.js')` in that plugin is a module
 * (scripts/build-plugins.mjs, `coldLoaders`) that calls `loadCold` with the modules the cold bundle links to.
 *
 * A cold bundle holds only its plugin's cold modules: every other module it imports (the kernel, the plugin's
 * modules keel.cjs holds, the vendor loader) is keel.cjs's instance, never a copy, which its `require` gets from
 * `links` by the id `keel-host:<path>`; Node's own modules come from Node. It is compiled from source on first
 * use (a few to a few tens of KB), without a code cache.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { bundleFile } from './bundle-url.js';

const LINK = 'keel-host:';

export function loadCold(name: string, links: Record<string, () => unknown>): Record<string, unknown> {
  const dir = path.join(path.dirname(bundleFile()), 'cold');
  const file = path.join(dir, `${name}.cjs`);
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch (err) {
    // An install missing a file of its own build: say which, and how to make it whole again.
    const why = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(`${file} cannot be read (${why}): this Keel install is incomplete; reinstall it or run npm run build in it`);
  }
  const source = `(function (exports, require, module, __filename, __dirname) {${code}\n})`;
  const factory = new vm.Script(source, { filename: file }).runInThisContext() as (exports: unknown, require: (id: string) => unknown, module: unknown, filename: string, dirname: string) => void;
  const node = createRequire(file);
  const require = (id: string): unknown => {
    if (!id.startsWith(LINK)) return node(id);
    const link = links[id.slice(LINK.length)];
    if (!link) throw new Error(`keel: dist/bin/cold/${name}.cjs imports ${id.slice(LINK.length)}, which keel.cjs does not offer it (rebuild Keel)`);
    return link();
  };
  const module = { exports: {} as Record<string, unknown> };
  factory(module.exports, require, module, file, dir);
  return module.exports;
}
