/**
 * The kernel is what every face needs (CLI, keel/sdk, keel/testing): it never imports the terminal edge (cli/),
 * the presets, or the edge's libraries (commander, jiti, cosmiconfig). Read from the sources, every import form.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const kernelDir = path.join(root, 'kernel');
const FORBIDDEN_PACKAGES = ['commander', 'jiti', 'cosmiconfig'];
const FORBIDDEN_FOLDERS = ['cli', 'presets'].map((folder) => path.join(root, folder));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return /\.(ts|tsx|mts|cts)$/.test(entry.name) ? [file] : [];
  });
}

/** Every module specifier: static and type imports, re-exports, dynamic import(), require(). */
export function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g, /\brequire\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!);
  return found;
}

function offence(file: string, specifier: string): string | undefined {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
  if (FORBIDDEN_PACKAGES.includes(name)) return `${specifier} (the edge's library)`;
  if (!specifier.startsWith('.')) return undefined;
  const target = path.resolve(path.dirname(file), specifier);
  const folder = FORBIDDEN_FOLDERS.find((dir) => target === dir || target.startsWith(`${dir}${path.sep}`));
  return folder ? `${specifier} (${path.basename(folder)}/)` : undefined;
}

describe('the kernel imports', () => {
  it('nothing in kernel/ imports commander, jiti, cosmiconfig, cli/ or presets/', () => {
    const offences = sources(kernelDir).flatMap((file) =>
      specifiers(readFileSync(file, 'utf8'))
        .map((specifier) => offence(file, specifier))
        .filter((o): o is string => o !== undefined)
        .map((o) => `${path.relative(root, file)}: ${o}`),
    );
    expect(offences).toEqual([]);
  });

  it('the check sees every import form', () => {
    const text = [
      "import { Command } from 'commander';",
      "import type { X } from '../cli/main.js';",
      "export { loadPreset } from '../presets/index.js';",
      "import 'jiti';",
      "const c = await import('cosmiconfig');",
      "const r = require('../cli/config.js');",
    ].join('\n');
    const file = path.join(kernelDir, 'probe.ts');
    expect(specifiers(text).map((s) => offence(file, s)).filter(Boolean)).toHaveLength(6);
    expect(offence(file, './loop.js')).toBeUndefined();
    expect(offence(file, 'zod')).toBeUndefined();
  });
});
