/** Packs Keel and example packages with `npm pack` and installs the tarballs into a temp project, as a user would. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' } });
}

/**
 * Packs Keel and each folder in `packages` into `packs`, then installs every tarball into a new `project` folder
 * (an ES module package). Returns the installed `keel` binary.
 */
export function installPacked(packs: string, project: string, packages: string[]): string {
  const tarballs = [REPO_ROOT, ...packages].map((dir) => pack(packs, dir));
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // A plain install, as the README says (no --legacy-peer-deps): the packages' `keel` peer is optional.
  npm(['install', '--prefer-offline', '--no-save', ...tarballs], project);
  return path.join(project, 'node_modules', 'keel', 'bin', 'keel.js');
}

/** Packs one package folder into `packs` and returns the tarball's path. */
export function pack(packs: string, dir: string): string {
  mkdirSync(packs, { recursive: true });
  // --ignore-scripts: packing must not rebuild dist/ under the other tests' feet; `npm test` built it already.
  return path.join(packs, npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', packs], dir).trim().split('\n').pop()!);
}
