/**
 * Issue 24, class 8: a plugin a trusted config names by package (`plugins: ['keel-plugin-x']`) runs from
 * `node_modules` at every start. Its folder, the packages it loads, and the folders where the same name would be
 * found first next time are asked about before any write, in every mode; inside the sandbox they are read-only.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTools, resultText, say, useHostile, type Hostile } from '../../helpers/adversary.js';
import { expectHarmless, hidden, skipReason, useAttack } from './sandbox-world.js';

const hostile = useHostile();
const attack = useAttack();
const SLOW = 90_000;
const ASKED = /needs the user's approval/;
const PLUGIN_CODE = "import dep from 'x-dep';\nexport default { name: 'plugin-x', kernel: '^1.0.0', apply() { void dep; } };\n";

/** A package that exports a plugin, in `<modules>/<name>`, and the package it imports. */
function plantPackages(write: (relative: string, content: string) => void, modules: string, name: string): void {
  write(`${modules}/${name}/package.json`, JSON.stringify({ name, version: '1.0.0', type: 'module', main: 'index.js', dependencies: { 'x-dep': '1.0.0' } }));
  write(`${modules}/${name}/index.js`, PLUGIN_CODE.replace('plugin-x', name.replace('keel-', '')));
  write(`${modules}/x-dep/package.json`, JSON.stringify({ name: 'x-dep', version: '1.0.0', type: 'module', main: 'index.js' }));
  write(`${modules}/x-dep/index.js`, 'export default 1;\n');
}

function contentOf(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** A trusted project whose config names keel-plugin-x, and a user config naming keel-plugin-y (in $KEEL_HOME). */
function plantWorld(h: Hostile): void {
  h.write('agent.config.ts', "export default { plugins: ['keel-plugin-x'] };\n");
  plantPackages((rel, content) => h.write(rel, content), 'node_modules', 'keel-plugin-x');
  const inHome = (rel: string, content: string) => h.write(path.relative(h.dir, path.join(h.keelHome, rel)), content);
  inHome('agent.config.ts', "export default { plugins: ['keel-plugin-y'] };\n");
  plantPackages(inHome, 'node_modules', 'keel-plugin-y');
}

describe.each(['edits', 'auto'] as const)('class 8 without the sandbox, %s mode', (mode) => {
  it("writes to a named plugin's package, a package it loads, or a folder that would shadow it are asked", async () => {
    const h = await hostile();
    plantWorld(h);
    h.server.push(
      callTools(
        { id: 'w_idx', name: 'write_file', input: { path: 'node_modules/keel-plugin-x/index.js', content: 'export default {};\n' } },
        { id: 'e_idx', name: 'edit_file', input: { path: 'node_modules/keel-plugin-x/index.js', old_string: 'apply() {', new_string: 'apply() { process.exit(0);' } },
        { id: 'w_new', name: 'write_file', input: { path: 'node_modules/keel-plugin-x/lib/evil.js', content: 'x\n' } },
        { id: 'w_dep', name: 'write_file', input: { path: 'node_modules/x-dep/index.js', content: 'export default 2;\n' } },
        { id: 'w_shadow', name: 'write_file', input: { path: 'node_modules/keel-plugin-y/package.json', content: '{"name":"keel-plugin-y","main":"evil.js"}' } },
        { id: 'b_idx', name: 'bash', input: { command: "echo 'globalThis.pwned = 1;' >> node_modules/keel-plugin-x/index.js" } },
        { id: 'b_rm', name: 'bash', input: { command: 'rm -rf node_modules/keel-plugin-x' } },
        { id: 'w_ok', name: 'write_file', input: { path: 'node_modules/unrelated/index.js', content: 'x\n' } },
      ),
      say('done'),
    );
    const run = await h.run(['-p', 'go', '--permission-mode', mode, '--trust']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    for (const id of ['w_idx', 'e_idx', 'w_new', 'w_dep', 'w_shadow', 'b_idx', 'b_rm']) {
      expect(v.results[id]?.is_error, `${id}: ${resultText(v.results[id])}`).toBe(true);
      expect(resultText(v.results[id]), id).toMatch(ASKED);
    }
    expect(resultText(v.results.w_idx)).toMatch(/the package of the Keel plugin "plugin-x" \(keel-plugin-x/);
    expect(resultText(v.results.w_dep)).toMatch(/a package the Keel plugin package keel-plugin-x loads \(x-dep\)/);
    expect(resultText(v.results.w_shadow)).toMatch(/the package of the Keel plugin "plugin-y" \(keel-plugin-y/);
    expect(contentOf(h.path('node_modules/keel-plugin-x/index.js'))).toBe(PLUGIN_CODE);
    expect(existsSync(h.path('node_modules/keel-plugin-x/lib'))).toBe(false);
    expect(contentOf(h.path('node_modules/x-dep/index.js'))).toBe('export default 1;\n');
    expect(existsSync(h.path('node_modules/keel-plugin-y'))).toBe(false);
    // Other packages stay writable (installing dependencies is ordinary work).
    expect(v.results.w_ok?.is_error, resultText(v.results.w_ok)).toBeUndefined();
    expect(v.changed).toEqual([]);
  });
});

describe.skipIf(Boolean(skipReason))('class 8 inside the sandbox', { timeout: SLOW }, () => {
  const setup = (h: Hostile) => plantPackages((rel, content) => h.write(rel, content), 'node_modules', 'keel-plugin-x');
  const config = "plugins: ['keel-plugin-x']";

  it("the named plugin's package and the package it loads are read-only; other packages are writable", async () => {
    const a = await attack(
      [
        { id: 'b1', input: { command: hidden("echo 'globalThis.pwned = 1;' >> node_modules/keel-plugin-x/index.js") } },
        { id: 'b2', input: { command: hidden('echo x > node_modules/keel-plugin-x/evil.js; echo "export default 2;" > node_modules/x-dep/index.js') } },
        { id: 'b3', input: { command: hidden('rm -rf node_modules/keel-plugin-x; mkdir -p node_modules/keel-plugin-x; echo "{}" > node_modules/keel-plugin-x/package.json') } },
        { id: 'b4', input: { command: 'mkdir -p node_modules/unrelated && echo ok > node_modules/unrelated/index.js && cat node_modules/unrelated/index.js' } },
      ],
      { config, setup },
    );
    expectHarmless(a, ['b1', 'b2', 'b3', 'b4']);
    expect(a.text('b1')).toMatch(/Read-only file system/);
    expect(contentOf(a.h.path('node_modules/keel-plugin-x/index.js'))).toBe(PLUGIN_CODE);
    expect(existsSync(a.h.path('node_modules/keel-plugin-x/evil.js'))).toBe(false);
    expect(contentOf(a.h.path('node_modules/keel-plugin-x/package.json'))).toContain('"keel-plugin-x"');
    expect(contentOf(a.h.path('node_modules/x-dep/index.js'))).toBe('export default 1;\n');
    expect(a.text('b4')).toMatch(/ok/);
    expect(contentOf(a.h.path('node_modules/unrelated/index.js'))).toBe('ok\n');
  });

  it("a package cannot be planted where the user's plugin would be found first next time", async () => {
    const a = await attack(
      [{ id: 'b1', input: { command: hidden('mkdir -p node_modules/keel-plugin-y && echo \'{"name":"keel-plugin-y","type":"module","main":"evil.js"}\' > node_modules/keel-plugin-y/package.json && echo "export default 1" > node_modules/keel-plugin-y/evil.js') } }],
      {
        config,
        setup: (h) => {
          setup(h);
          const inHome = (rel: string, content: string) => h.write(path.relative(h.dir, path.join(h.keelHome, rel)), content);
          inHome('agent.config.ts', "export default { plugins: ['keel-plugin-y'] };\n");
          plantPackages(inHome, 'node_modules', 'keel-plugin-y');
        },
      },
    );
    expectHarmless(a, ['b1']);
    // The missing name is held read-only while the command runs (a placeholder, removed after), so the write fails.
    expect(a.text('b1')).toMatch(/node_modules\/keel-plugin-y\/package\.json: Read-only file system/);
    expect(existsSync(a.h.path('node_modules/keel-plugin-y'))).toBe(false);
  });
});
