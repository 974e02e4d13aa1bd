/** Plugins and presets named by package in config: where they are found, what they must export, and trust. */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assemble } from '../../cli/main.js';
import { defineConfig, definePreset } from '../../kernel/index.js';
import type { CommandLine } from '../../cli/options.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

const flags = (extra: Partial<CommandLine> = {}): CommandLine => ({ outputFormat: 'text', inputFormat: 'text', trust: true, ...extra });
const env = () => ({ KEEL_HOME: ws.home, PATH: process.env.PATH });

/** Writes an ESM package `name` into `nodeModules` with `index.js` as its entry. */
function writePackage(nodeModules: string, name: string, index: string, version = '1.0.0'): string {
  const dir = path.join(nodeModules, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version, type: 'module', exports: { '.': { types: './index.d.ts', default: './index.js' } } }));
  writeFileSync(path.join(dir, 'index.js'), index);
  return dir;
}

/** A plugin factory that puts its options in `version`, so a test can see them. */
const factory = (name: string) => `export default (opts = {}) => ({ name: '${name}', kernel: '^1.0.0', version: opts.tag ?? 'none', apply() {} });\n`;
const presetLean = `export default { name: 'lean', extends: 'minimal', disable: ['tool-bash'], plugins: [{ name: 'lean-extra', kernel: '^1.0.0', apply() {} }] };\n`;
const project = () => ws.path('node_modules');
const user = () => path.join(ws.home, 'node_modules');

describe('plugins by package name', () => {
  it('type-checks names, [name, options] and plugin objects in defineConfig, and a package in extends', () => {
    const config = defineConfig({
      preset: definePreset({ name: 'mine', extends: 'keel-preset-x' }),
      plugins: ['keel-plugin-a', ['@acme/keel-plugin-b', { tag: 1 }], ['keel-plugin-c'], { name: 'inline', kernel: '^1.0.0', apply() {} }],
    });
    expect(config.plugins).toHaveLength(4);
  });

  it('loads a name and a [name, options] entry from the project, beside an imported plugin', async () => {
    ws = makeWorkspace({ git: true });
    const hello = writePackage(project(), 'keel-plugin-hello', factory('hello'), '1.2.3');
    writePackage(project(), '@acme/keel-plugin-tagged', factory('tagged'));
    const file = ws.write(
      'agent.config.ts',
      "export default { preset: 'minimal', plugins: ['keel-plugin-hello', ['@acme/keel-plugin-tagged', { tag: 'opt' }], { name: 'inline', kernel: '^1.0.0', apply() {} }] };\n",
    );
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    expect(kernel.plugins.slice(-3).map((p) => `${p.name}@${p.version ?? ''}`)).toEqual(['hello@none', 'tagged@opt', 'inline@']);
    expect(kernel.config.packages).toEqual([
      { kind: 'plugin', provides: 'hello', package: 'keel-plugin-hello', version: '1.2.3', path: hello, source: file, key: 'plugins.0' },
      expect.objectContaining({ provides: 'tagged', package: '@acme/keel-plugin-tagged', key: 'plugins.1' }),
    ]);
  });

  it('accepts a plugin object as the default export, and a TypeScript entry', async () => {
    ws = makeWorkspace({ git: true });
    writePackage(project(), 'keel-plugin-object', `export default { name: 'object', kernel: '^1.0.0', apply() {} };\n`);
    const ts = path.join(project(), 'keel-plugin-ts');
    mkdirSync(ts, { recursive: true });
    writeFileSync(path.join(ts, 'package.json'), JSON.stringify({ name: 'keel-plugin-ts', version: '0.1.0', main: 'index.ts' }));
    writeFileSync(path.join(ts, 'index.ts'), "import { definePlugin } from 'keel';\nexport default definePlugin((): { name: string; kernel: string; apply(): void } => ({ name: 'typed', kernel: '^1.0.0', apply() {} }));\n");
    ws.write('agent.config.json', JSON.stringify({ preset: 'minimal', plugins: ['keel-plugin-object', 'keel-plugin-ts'] }));
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    expect(kernel.plugins.slice(-2).map((p) => p.name)).toEqual(['object', 'typed']);
  });

  it('falls back to $KEEL_HOME/node_modules, for the user config and for the project config', async () => {
    ws = makeWorkspace({ git: true });
    const home = writePackage(user(), 'keel-plugin-home', factory('home'));
    writePackage(user(), 'keel-plugin-shared', factory('shared'));
    writeFileSync(path.join(ws.home, 'agent.config.ts'), "export default { plugins: ['keel-plugin-home'] };\n");
    ws.write('agent.config.ts', "export default { preset: 'minimal', plugins: ['keel-plugin-shared'] };\n");
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    expect(kernel.plugins.slice(-2).map((p) => p.name)).toEqual(['home', 'shared']);
    expect(kernel.config.packages?.[0]).toMatchObject({ path: home, source: path.join(ws.home, 'agent.config.ts') });
  });

  it("a package in $KEEL_HOME that imports keel without a copy of keel beside it gets the running Keel", async () => {
    ws = makeWorkspace({ git: true });
    writePackage(user(), 'keel-plugin-peerless', "import { definePlugin, KERNEL_VERSION } from 'keel';\nexport default definePlugin(() => ({ name: 'peerless', kernel: '^1.0.0', version: KERNEL_VERSION, apply() {} }));\n");
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ preset: 'minimal', plugins: ['keel-plugin-peerless'] }));
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    expect(kernel.plugins.at(-1)).toMatchObject({ name: 'peerless', version: '1.0.0' });
  });

  it('a missing package says where it looked', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.ts', "export default { plugins: ['keel-plugin-nope'] };\n");
    const err = await assemble(flags(), env(), undefined, ws.dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 2 });
    expect((err as Error).message).toBe(`${file}: plugins.0: no package "keel-plugin-nope" is installed (looked in ${project()}, ${user()})`);
  });

  it('walks up from a config in a subfolder to the project root, and never above it', async () => {
    ws = makeWorkspace({ git: true });
    writePackage(ws.path('packages/app/node_modules'), 'keel-plugin-near', factory('near'));
    writePackage(project(), 'keel-plugin-root', factory('root'));
    // Above the project root: Node would look here, Keel does not (another user may own such a folder).
    writePackage(path.join(path.dirname(ws.dir), 'node_modules'), 'keel-plugin-above', factory('above'));
    const file = ws.write('packages/app/agent.config.json', JSON.stringify({ preset: 'minimal', plugins: ['keel-plugin-near', 'keel-plugin-root'] }));
    const kernel = await assemble(flags(), env(), undefined, ws.path('packages/app'));
    expect(kernel.plugins.slice(-2).map((p) => p.name)).toEqual(['near', 'root']);
    writeFileSync(file, JSON.stringify({ plugins: ['keel-plugin-above'] }));
    await expect(assemble(flags(), env(), undefined, ws.path('packages/app'))).rejects.toThrow(
      `${file}: plugins.0: no package "keel-plugin-above" is installed (looked in ${ws.path('packages/app/node_modules')}, ${ws.path('packages/node_modules')}, ${project()}, ${user()})`,
    );
  });

  it('a package that is not a plugin says what it exports instead', async () => {
    ws = makeWorkspace({ git: true });
    writePackage(project(), 'keel-plugin-data', `export default { hello: 1, world: 2 };\n`);
    writePackage(project(), 'keel-plugin-named', `export const helper = 1;\n`);
    writePackage(project(), 'keel-plugin-old', `export default () => ({ name: 'old', kernel: '^0.1.0', apply() {} });\n`);
    const file = ws.write('agent.config.json', JSON.stringify({ plugins: ['keel-plugin-data'] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toMatchObject({
      exitCode: 2,
      message: `${file}: plugins.0: package "keel-plugin-data" is not a Keel plugin: its default export is an object with hello, world; expected a plugin { name, kernel, apply } or a definePlugin factory`,
    });
    writeFileSync(file, JSON.stringify({ plugins: ['keel-plugin-named'] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: plugins.0: package "keel-plugin-named" is not a Keel plugin: no default export (it exports helper)`);
    writeFileSync(file, JSON.stringify({ plugins: ['keel-plugin-old'] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: plugins.0: package "keel-plugin-old" is not a Keel plugin: needs kernel ^0.1.0, but this kernel is 1.0.0`);
  });

  it('a factory that throws, options for a plugin object, and bad entries', async () => {
    ws = makeWorkspace({ git: true });
    writePackage(project(), 'keel-plugin-picky', `export default (opts = {}) => { if (!opts.token) throw new Error('options.token is required'); return { name: 'picky', kernel: '^1.0.0', apply() {} }; };\n`);
    writePackage(project(), 'keel-plugin-object', `export default { name: 'object', kernel: '^1.0.0', apply() {} };\n`);
    const file = ws.write('agent.config.json', JSON.stringify({ plugins: [['keel-plugin-picky', { tokn: 'x' }]] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toMatchObject({
      exitCode: 2,
      message: `${file}: plugins.0: package "keel-plugin-picky": its plugin factory threw (check the options): options.token is required`,
    });
    writeFileSync(file, JSON.stringify({ plugins: ['keel-plugin-picky'] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: plugins.0: package "keel-plugin-picky": its plugin factory threw: options.token is required`);
    writeFileSync(file, JSON.stringify({ plugins: [['keel-plugin-object', { a: 1 }]] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: plugins.0: package "keel-plugin-object" exports a plugin object, not a factory, so it takes no options`);
    writeFileSync(file, JSON.stringify({ plugins: ['keel-plugin-object', ['keel-plugin-object', {}, 3]] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: plugins.1: expected a plugin, "package-name" or ["package-name", options]`);
    writeFileSync(file, JSON.stringify({ plugins: ['../../etc/evil'] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: plugins.0: "../../etc/evil" is not a package name`);
  });
});

describe('presets by package name', () => {
  it('preset: a package in config, --preset and definePreset({ extends }) by package name', async () => {
    ws = makeWorkspace({ git: true });
    const lean = writePackage(project(), 'keel-preset-lean', presetLean, '2.0.0');
    const file = ws.write('agent.config.ts', "export default { preset: 'keel-preset-lean' };\n");
    const leanPlugins = ['system-prompt', 'network', 'query-anthropic', 'permissions', 'tools-fs', 'print', 'lean-extra'];
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    expect(kernel.plugins.map((p) => p.name)).toEqual(leanPlugins);
    expect(kernel.config.packages).toEqual([{ kind: 'preset', provides: 'lean', package: 'keel-preset-lean', version: '2.0.0', path: lean, source: file, key: 'preset' }]);

    writeFileSync(file, "import { definePreset } from 'keel';\nexport default { preset: definePreset({ name: 'leaner', extends: 'keel-preset-lean', disable: ['lean-extra'] }) };\n");
    const extended = await assemble(flags(), env(), undefined, ws.dir);
    expect(extended.plugins.map((p) => p.name)).toEqual(leanPlugins.slice(0, -1));
    expect(extended.config.packages?.[0]).toMatchObject({ key: 'preset.extends', provides: 'lean' });

    rmSync(file);
    const flagged = await assemble(flags({ preset: 'keel-preset-lean' }), env(), undefined, ws.dir);
    expect(flagged.plugins.map((p) => p.name)).toEqual(leanPlugins);
  });

  it('a preset factory, a package preset that extends another package, and built-in names win over packages', async () => {
    ws = makeWorkspace({ git: true });
    writePackage(project(), 'keel-preset-made', `export default () => ({ name: 'made', extends: 'minimal', plugins: [] });\n`);
    writePackage(project(), 'keel-preset-lean', presetLean);
    writePackage(user(), 'keel-preset-outer', `export default { name: 'outer', extends: 'keel-preset-lean', disable: ['print'], plugins: [] };\n`);
    const outer = await assemble(flags({ preset: 'keel-preset-outer' }), env(), undefined, ws.dir);
    expect(outer.plugins.map((p) => p.name)).toEqual(['system-prompt', 'network', 'query-anthropic', 'permissions', 'tools-fs', 'lean-extra']);
    expect(outer.config.packages?.map((p) => `${p.key}:${p.package}`)).toEqual(['preset:keel-preset-outer', 'preset.extends:keel-preset-lean']);
    writePackage(project(), 'minimal', `throw new Error('a package must not shadow a built-in preset');\n`);
    const made = await assemble(flags({ preset: 'keel-preset-made' }), env(), undefined, ws.dir);
    expect((made.config.preset as { name: string }).name).toBe('made');
    const builtIn = await assemble(flags({ preset: 'minimal' }), env(), undefined, ws.dir);
    expect(builtIn.config.packages).toEqual([]);
  });

  it('a missing preset package and one that is not a preset', async () => {
    ws = makeWorkspace({ git: true });
    writePackage(project(), 'keel-preset-plugin', factory('not-a-preset'));
    const file = ws.write('agent.config.ts', "export default { preset: 'keel-preset-nope' };\n");
    const err = (await assemble(flags(), env(), undefined, ws.dir).catch((e: unknown) => e)) as Error & { exitCode: number };
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/^.*agent\.config\.ts: preset: unknown preset "keel-preset-nope" \(known presets: default, headless, minimal, policy-strict, fleet-worker\), and no package "keel-preset-nope" is installed \(looked in /);
    expect(err.message.startsWith(`${file}: preset: `)).toBe(true);
    writeFileSync(file, "export default { preset: 'keel-preset-plugin' };\n");
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(
      `${file}: preset: package "keel-preset-plugin" is not a Keel preset: its default export is a function that returned an object with name, kernel, version, apply; expected a preset { name, plugins } (definePreset)`,
    );
    writeFileSync(file, "import { definePreset } from 'keel';\nexport default { preset: definePreset({ name: 'x', extends: 'keel-preset-gone' }) };\n");
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: preset.extends: unknown preset "keel-preset-gone"`);
  });
});

describe('an untrusted folder cannot hijack a package name', () => {
  /** A package that leaves a file outside the workspace as soon as it is imported, and when its factory runs. */
  function plantCanary(canary: string, kind: 'plugin' | 'preset') {
    const body = `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(canary)}, 'hijacked at import');\n`;
    const entry =
      kind === 'plugin'
        ? `export default () => { writeFileSync(${JSON.stringify(canary)}, 'hijacked'); return { name: 'x', kernel: '^1.0.0', version: 'planted', apply() {} }; };\n`
        : `export default { name: 'planted', extends: 'minimal', plugins: [] };\n`;
    writePackage(project(), kind === 'plugin' ? 'keel-plugin-x' : 'keel-preset-x', body + entry);
  }

  it("a planted project package never runs for a name in the user's config, a flag or the environment", async () => {
    ws = makeWorkspace({ git: true });
    const outside = mkdtempSync(path.join(tmpdir(), 'keel-canary-'));
    const canary = path.join(outside, 'canary.txt');
    try {
      plantCanary(canary, 'plugin');
      plantCanary(canary, 'preset');
      await expect(assemble(flags({ trust: false, preset: 'keel-preset-x' }), env(), undefined, ws.dir)).rejects.toThrow(/^--preset: unknown preset "keel-preset-x"/);
      await expect(assemble(flags({ trust: false }), { ...env(), KEEL_PRESET: 'keel-preset-x' }, undefined, ws.dir)).rejects.toThrow(/^KEEL_PRESET: unknown preset "keel-preset-x"/);
      writeFileSync(path.join(ws.home, 'agent.config.ts'), "export default { plugins: ['keel-plugin-x'] };\n");
      // Nothing of the user's installed: the name is missing, and the error says why the project was not searched.
      const err = (await assemble(flags({ trust: false }), env(), undefined, ws.dir).catch((e: unknown) => e)) as Error;
      expect(err.message).toBe(
        `${path.join(ws.home, 'agent.config.ts')}: plugins.0: no package "keel-plugin-x" is installed (looked in ${user()}; not in the project's node_modules, since ${ws.dir} is not a trusted folder (keel trust))`,
      );
      expect(existsSync(canary)).toBe(false);

      // The user's own copy is the one that loads.
      writePackage(user(), 'keel-plugin-x', `export default () => ({ name: 'x', kernel: '^1.0.0', version: 'users', apply() {} });\n`);
      const kernel = await assemble(flags({ trust: false }), env(), undefined, ws.dir);
      expect(kernel.plugins.find((p) => p.name === 'x')?.version).toBe('users');
      expect(kernel.config.packages?.[0]?.path).toBe(path.join(user(), 'keel-plugin-x'));
      expect(existsSync(canary)).toBe(false);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('a --config file inside an untrusted project resolves from the user only; a trusted project comes first', async () => {
    ws = makeWorkspace({ git: true });
    writePackage(project(), 'keel-plugin-y', `export default () => ({ name: 'y', kernel: '^1.0.0', version: 'project', apply() {} });\n`);
    writePackage(user(), 'keel-plugin-y', `export default () => ({ name: 'y', kernel: '^1.0.0', version: 'users', apply() {} });\n`);
    ws.write('review.config.json', JSON.stringify({ plugins: ['keel-plugin-y'] }));
    const untrusted = await assemble(flags({ trust: false, config: 'review.config.json' }), env(), undefined, ws.dir);
    expect(untrusted.plugins.find((p) => p.name === 'y')?.version).toBe('users');
    // Trusted: the project's node_modules come first (its agent.config.ts could import anything anyway).
    const trusted = await assemble(flags({ trust: true, config: 'review.config.json' }), env(), undefined, ws.dir);
    expect(trusted.plugins.find((p) => p.name === 'y')?.version).toBe('project');
    // A --config file outside the project looks in its own folder's node_modules first, trusted or not.
    const elsewhere = path.join(ws.home, 'configs');
    writePackage(path.join(elsewhere, 'node_modules'), 'keel-plugin-y', `export default () => ({ name: 'y', kernel: '^1.0.0', version: 'beside-config', apply() {} });\n`);
    writeFileSync(path.join(elsewhere, 'review.json'), JSON.stringify({ plugins: ['keel-plugin-y'] }));
    for (const trust of [false, true]) {
      const beside = await assemble(flags({ trust, config: path.join(elsewhere, 'review.json') }), env(), undefined, ws.dir);
      expect(beside.plugins.find((p) => p.name === 'y')?.version).toBe('beside-config');
    }
  });
});
