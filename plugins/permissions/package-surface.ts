/**
 * Plugins and presets a config names by package (`'keel-plugin-x'`) run as code at every trusted start, from the
 * folder package resolution recorded (`kernel.config.packages`). That folder, every other folder the same name
 * would be found in first next time (the project's `node_modules` before the user's), and the packages it
 * depends on (as Node finds them from it) are where a write turns into code: they join the settings surface.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { PackageSource } from '../../kernel/index.js';
import { isInside } from './paths.js';

export interface PackageSurfaceItem {
  path: string;
  why: string;
}

/** An npm package name, scoped or not: a dependency name in a package.json never names a path (`../x`). */
const PACKAGE_NAME = /^(@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/i;

/** Dependency packages followed at most, all plugins together: enough for real plugins, bounded for huge trees. */
const MAX_DEPENDENCIES = 256;

function packageJson(dir: string): Record<string, unknown> | undefined {
  try {
    if (!statSync(path.join(dir, 'package.json')).isFile()) return undefined;
    const value = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function real(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

/** The folder Node would load `name` from when imported by a file in `from`: the nearest `node_modules/<name>` up. */
function nodeFind(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== 'node_modules') {
      const candidate = path.join(dir, 'node_modules', name);
      if (packageJson(candidate)) return candidate;
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The `node_modules` folders from `cwd` (or `root` when it is outside) up to `root`, as a trusted project's are searched. */
function projectModuleDirs(cwd: string, root: string): string[] {
  const dirs: string[] = [];
  for (let dir = isInside(cwd, root) ? cwd : root; ; dir = path.dirname(dir)) {
    dirs.push(path.join(dir, 'node_modules'));
    if (dir === root || path.dirname(dir) === dir) return dirs;
  }
}

export function packageSurface(packages: readonly PackageSource[], ctx: { projectRoot: string; cwd: string; keelHome: string }): PackageSurfaceItem[] {
  const items: PackageSurfaceItem[] = [];
  const add = (p: string, why: string) => {
    items.push({ path: p, why });
    const target = real(p);
    if (target !== p) items.push({ path: target, why });
  };
  const queue: Array<{ dir: string; owner: string }> = [];
  for (const pkg of packages) {
    const why = `the package of the Keel ${pkg.kind} "${pkg.provides}" (${pkg.package}, named in ${pkg.source}): its code runs at every start`;
    add(pkg.path, why);
    // Where the same name would be found first at the next start: a package planted there would replace it.
    const slots = [...projectModuleDirs(path.resolve(ctx.cwd), path.resolve(ctx.projectRoot)), ...(ctx.keelHome ? [path.join(ctx.keelHome, 'node_modules')] : [])];
    for (const dir of slots) {
      const slot = path.join(dir, pkg.package);
      if (slot !== pkg.path) add(slot, why);
    }
    queue.push({ dir: real(pkg.path), owner: pkg.package });
  }
  const seen = new Set(queue.map((q) => q.dir));
  while (queue.length > 0 && seen.size <= MAX_DEPENDENCIES) {
    const { dir, owner } = queue.shift()!;
    const manifest = packageJson(dir) ?? {};
    const names = new Set<string>();
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
      const deps = manifest[field];
      if (typeof deps === 'object' && deps !== null) for (const name of Object.keys(deps)) names.add(name);
    }
    for (const name of names) {
      if (!PACKAGE_NAME.test(name)) continue;
      const found = nodeFind(name, dir);
      if (!found) continue;
      const target = real(found);
      if (seen.has(target)) continue;
      seen.add(target);
      add(found, `a package the Keel plugin package ${owner} loads (${name}): its code runs at every start`);
      queue.push({ dir: target, owner });
    }
  }
  return items;
}
