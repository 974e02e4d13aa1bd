/**
 * Evaluates a config and the modules it imports the way Keel needs: TypeScript and ES module sources are
 * transformed once to an async CommonJS form (jiti's transform, loaded only on a cache miss) and cached
 * (transpile-cache.ts); `keel`, `keel/presets` and `keel/plugins/<name>` are the running Keel's modules
 * (keel-modules.ts), in the config and in every module it reaches through here. A package that depends on Keel
 * (a plugin or preset package) is evaluated here too, so its `import 'keel'` is also the running kernel; any other
 * package is imported natively.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { keelModule } from './keel-modules.js';
import { entryFile } from './resolve-package.js';
import { nativeImport } from './native-import.js';
import type { TranspileCache } from './transpile-cache.js';

type Namespace = Record<string, unknown>;
type Transform = (source: string, file: string) => Promise<string>;

const EXTENSIONS = ['.ts', '.mts', '.cts', '.tsx', '.js', '.mjs', '.cjs', '.json'];
const TS_FILE = /\.[mc]?tsx?$/;

export class ModuleGraph {
  private readonly modules = new Map<string, { exports: Namespace }>();
  private readonly keelDependents = new Map<string, boolean>();

  constructor(
    private readonly cache: TranspileCache | undefined,
    private readonly transform: Transform,
  ) {}

  /** The module's exports (its `module.exports`, with `default` for an ES module's default export). */
  async load(file: string): Promise<Namespace> {
    const known = this.modules.get(file);
    if (known) return known.exports;
    if (file.endsWith('.json')) return asEsModule({ default: JSON.parse(readFileSync(file, 'utf8')) });
    const source = readFileSync(file, 'utf8');
    let code = this.cache?.read(file, source);
    if (code === undefined) {
      code = await this.transform(source, file);
      this.cache?.write(file, source, code);
    }
    const module = { exports: {} as Namespace };
    this.modules.set(file, module);
    const wrapper = `(async function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) { ${code}\n});`;
    const fn = vm.runInThisContext(wrapper, { filename: file }) as (...args: unknown[]) => Promise<void>;
    const nativeRequire = createRequire(file);
    const require = (specifier: string): unknown => keelModule(specifier) ?? nativeRequire(specifier);
    await fn(module.exports, require, module, file, path.dirname(file), (specifier: string) => this.importFrom(file, specifier), (specifier: string) => pathToFileURL(this.resolve(file, specifier)).href);
    return module.exports;
  }

  /** `import(specifier)` from `parent`. */
  async importFrom(parent: string, specifier: string): Promise<Namespace> {
    const own = keelModule(specifier);
    if (own) return asEsModule(own);
    if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return asEsModule(await nativeImport(specifier));
    const file = this.resolve(parent, specifier);
    const bare = !isPathSpecifier(specifier);
    if (!bare || this.dependsOnKeel(file)) return asEsModule(await this.load(file));
    return asEsModule(await nativeImport(pathToFileURL(file).href));
  }

  /** A specifier imported from `parent` as a file path (relative paths with TypeScript's extension rules). */
  resolve(parent: string, specifier: string): string {
    if (isPathSpecifier(specifier)) {
      const base = specifier.startsWith('file:') ? fileURLToPath(specifier) : path.resolve(path.dirname(parent), specifier);
      const found = resolvePath(base);
      if (!found) throw Object.assign(new Error(`Cannot find module '${specifier}' imported from ${parent}`), { code: 'ERR_MODULE_NOT_FOUND' });
      return found;
    }
    try {
      return createRequire(parent).resolve(specifier);
    } catch (err) {
      // An ES-module-only package (its exports offer `import` but no `require`): its entry as Node's import() picks it.
      const entry = importEntry(parent, specifier);
      if (entry) return entry;
      throw err;
    }
  }

  /** Whether the package holding `file` lists `keel` as a dependency of any kind (a Keel plugin or preset). */
  private dependsOnKeel(file: string): boolean {
    const root = packageRootOf(file);
    if (!root) return false;
    let known = this.keelDependents.get(root);
    if (known === undefined) {
      try {
        const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
        known = ['dependencies', 'peerDependencies', 'devDependencies', 'optionalDependencies'].some((field) => pkg[field] && Object.hasOwn(pkg[field], 'keel'));
      } catch {
        known = false;
      }
      this.keelDependents.set(root, known);
    }
    return known;
  }
}

function isPathSpecifier(specifier: string): boolean {
  return specifier.startsWith('./') || specifier.startsWith('../') || specifier === '.' || specifier === '..' || specifier.startsWith('/') || specifier.startsWith('file:');
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The file a path names: itself, with an extension, `.js` written for a `.ts` source, or a folder's index. */
function resolvePath(base: string): string | undefined {
  if (isFile(base)) return base;
  const jsForTs = /\.([mc]?)js$/.exec(base);
  if (jsForTs) {
    const ts = `${base.slice(0, -jsForTs[0].length)}.${jsForTs[1]}ts`;
    if (isFile(ts)) return ts;
  }
  for (const ext of EXTENSIONS) if (isFile(base + ext)) return base + ext;
  for (const ext of EXTENSIONS) if (isFile(path.join(base, `index${ext}`))) return path.join(base, `index${ext}`);
  return undefined;
}

/** The `import` entry of package `name` (no subpath) as found from `parent`'s folder up; undefined if none. */
function importEntry(parent: string, name: string): string | undefined {
  if (!/^(@[\w.-]+\/)?[\w.-]+$/.test(name)) return undefined;
  for (let dir = path.dirname(parent); ; ) {
    const pkgDir = path.join(dir, 'node_modules', name);
    if (isFile(path.join(pkgDir, 'package.json'))) {
      const entry = entryFile(pkgDir, JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as Record<string, unknown>);
      return isFile(entry) ? entry : undefined;
    }
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

function packageRootOf(file: string): string | undefined {
  for (let dir = path.dirname(file); ; ) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

const esModules = new WeakMap<Namespace, Namespace>();

/**
 * Marks a namespace as an ES module for the transformed code's interop helpers (`import x from` reads `default`);
 * one view per namespace, so that every importer sees the same object, as with native modules.
 */
function asEsModule(ns: Namespace): Namespace {
  if (ns.__esModule) return ns;
  const known = esModules.get(ns);
  if (known) return known;
  const copy: Namespace = Object.create(null) as Namespace;
  for (const key of Object.keys(ns)) copy[key] = ns[key];
  if (!('default' in copy)) copy.default = ns;
  Object.defineProperty(copy, '__esModule', { value: true });
  esModules.set(ns, copy);
  return copy;
}

export const isTypeScript = (file: string): boolean => TS_FILE.test(file);
