/**
 * The public API's types, checked by the compiler: a plugin written as a third party writes it (module
 * augmentation included) type-checks against the sources and against the published declarations, and a file
 * of mistakes fails with exactly the errors it marks.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixtures = path.join(root, 'tests', 'types', 'fixtures');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const spaces: Workspace[] = [];
afterAll(() => spaces.forEach((ws) => ws.cleanup()));

/** Runs tsc with this config written into `dir` (a temp folder); returns its diagnostics (empty when it compiles). */
function check(dir: string, config: object): string {
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config));
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    return '';
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  }
}

const strict = { strict: true, noEmit: true, skipLibCheck: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')] };

describe('the public API types', () => {
  const againstSources = (fixture: string) => {
    const ws = makeWorkspace();
    spaces.push(ws);
    return check(ws.dir, { compilerOptions: { ...strict, paths: { keel: [path.join(root, 'kernel/index.ts')] } }, files: [path.join(fixtures, fixture)] });
  };

  it('a third-party plugin with module augmentation type-checks against the sources', () => {
    expect(againstSources('good-plugin.ts')).toBe('');
  });

  it('the same plugin type-checks against the published declarations (package exports → dist/*.d.ts)', () => {
    const ws = makeWorkspace();
    spaces.push(ws);
    mkdirSync(ws.path('node_modules'));
    symlinkSync(root, ws.path('node_modules/keel'));
    writeFileSync(ws.path('package.json'), JSON.stringify({ type: 'module' }));
    copyFileSync(path.join(fixtures, 'good-plugin.ts'), ws.path('good-plugin.ts'));
    expect(check(ws.dir, { compilerOptions: strict, files: ['good-plugin.ts'] })).toBe('');
  });

  it('each marked mistake is an error, with the marked code, and nothing else is', () => {
    const source = readFileSync(path.join(fixtures, 'bad-plugin.ts'), 'utf8');
    const expected = [...source.matchAll(/\/\/ (TS\d+):/g)].map((m) => m[1]);
    const out = againstSources('bad-plugin.ts');
    const actual = [...out.matchAll(/bad-plugin\.ts\(\d+,\d+\): error (TS\d+)/g)].map((m) => m[1]);
    expect(expected.length).toBeGreaterThanOrEqual(5);
    expect(actual).toEqual(expected);
  });
});
