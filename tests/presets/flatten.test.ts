import { describe, expect, it } from 'vitest';
import { definePlugin, definePreset, type Preset } from '../../kernel/index.js';
import { flattenPreset } from '../../presets/index.js';
import { assemble } from '../../cli/main.js';
import { loadPreset, PRESET_NAMES } from '../../presets/index.js';
import { testKernel } from '../helpers/kernel.js';
import { makeWorkspace } from '../helpers/workspace.js';

const plugin = (name: string, tag = '') => definePlugin(() => ({ name, kernel: '^1.0.0', version: tag, apply() {} }))();
const base = definePreset({ name: 'base', plugins: [plugin('a'), plugin('b'), plugin('c')] });
const load = async (name: string): Promise<Preset | undefined> => (name === 'base' ? base : undefined);
const names = (p: Preset) => p.plugins.map((x) => `${x.name}${x.version ? `@${x.version}` : ''}`);

describe('preset composition', () => {
  it('extends by name: the base plugins, less disable, replace in place, then its own', async () => {
    const flat = await flattenPreset(definePreset({ name: 'mine', extends: 'base', disable: ['a'], replace: [plugin('c', '2')], plugins: [plugin('d')] }), load, ['base']);
    expect(names(flat)).toEqual(['b', 'c@2', 'd']);
  });

  it('extends an object, and chains', async () => {
    const middle = definePreset({ name: 'middle', extends: base, plugins: [plugin('d')] });
    const flat = await flattenPreset(definePreset({ name: 'top', extends: middle, disable: ['b'] }), load, ['base']);
    expect(names(flat)).toEqual(['a', 'c', 'd']);
  });

  it('names the preset and plugin at fault', async () => {
    await expect(flattenPreset(definePreset({ name: 'mine', extends: 'nope' }), load, ['base'])).rejects.toThrow('preset "mine" extends "nope", which is not a preset (known presets: base)');
    await expect(flattenPreset(definePreset({ name: 'mine', extends: 'base', disable: ['zz'] }), load, ['base'])).rejects.toThrow('preset "mine": disable names "zz", but preset "base" has no plugin of that name (its plugins: a, b, c)');
    await expect(flattenPreset(definePreset({ name: 'mine', extends: 'base', replace: [plugin('zz')] }), load, ['base'])).rejects.toThrow('replace names "zz"');
    const loop: Preset = definePreset({ name: 'loop', plugins: [] });
    loop.extends = loop;
    await expect(flattenPreset(loop, load, [])).rejects.toThrow('preset "loop" extends itself (loop → loop)');
  });

  it('policy-strict is the default preset less tool-web, plus the policy', async () => {
    expect(PRESET_NAMES).toContain('policy-strict');
    const strict = (await loadPreset('policy-strict'))!;
    const full = (await loadPreset('default'))!;
    expect(strict.plugins.map((p) => p.name)).toEqual([...full.plugins.map((p) => p.name).filter((n) => n !== 'tool-web'), 'policy-strict']);
  });

  it.each(PRESET_NAMES)('the built-in preset %s assembles: every dependency is there, before its dependant', async (name) => {
    const preset = (await loadPreset(name))!;
    const ws = makeWorkspace({ git: true });
    try {
      expect(() => testKernel(preset.plugins, { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir })).not.toThrow();
    } finally {
      ws.cleanup();
    }
  });

  it.each(PRESET_NAMES)('the built-in preset %s has the redis plugin before fleet and session-store-redis, which share its connection', async (name) => {
    const plugins = (await loadPreset(name))!.plugins.map((p) => p.name);
    const users = plugins.filter((n) => n === 'fleet' || n === 'session-store-redis');
    if (!users.length) {
      expect(plugins).not.toContain('redis');
      return;
    }
    expect(plugins.indexOf('redis')).toBeGreaterThanOrEqual(0);
    for (const user of users) expect(plugins.indexOf('redis')).toBeLessThan(plugins.indexOf(user));
  });

  it('a config may name a preset object that extends a built-in', async () => {
    const ws = makeWorkspace({ git: true });
    try {
      ws.write('agent.config.ts', "import { definePreset } from 'keel';\nexport default { preset: definePreset({ name: 'lean', extends: 'minimal', disable: ['tool-bash'] }) };\n");
      const kernel = await assemble({ outputFormat: 'text', inputFormat: 'text', trust: true }, { KEEL_HOME: ws.home }, undefined, ws.dir);
      expect(kernel.plugins.map((p) => p.name)).toEqual(['system-prompt', 'network', 'query-anthropic', 'permissions', 'tools-fs', 'print']);
    } finally {
      ws.cleanup();
    }
  });
});
