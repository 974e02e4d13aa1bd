import { describe, expect, it } from 'vitest';
import { createKernel, definePlugin, KERNEL_VERSION, Stage, type Plugin } from '../../kernel/index.js';

const plugin = (name: string, extra: Partial<Plugin> = {}): Plugin => ({ name, kernel: '^1.0.0', apply() {}, ...extra });

describe('kernel.seal()', () => {
  it('accepts a well-formed set of plugins and freezes the registries', () => {
    const kernel = createKernel();
    kernel.use(plugin('a')).use(plugin('b', { dependencies: ['a'] }));
    expect(() => kernel.seal()).not.toThrow();
    expect(kernel.sealed).toBe(true);
    expect(() => kernel.tools.register({ name: 'x' } as never)).toThrow(/after the kernel is sealed/);
    expect(() => kernel.commands.register({ name: 'x', description: '', run: async () => {} })).toThrow(/sealed/);
    expect(() => kernel.services.provide('x', {})).toThrow(/sealed/);
  });

  it('rejects a duplicate plugin name', () => {
    const kernel = createKernel().use(plugin('dup')).use(plugin('dup'));
    expect(() => kernel.seal()).toThrow('plugin "dup" is registered twice');
  });

  it('rejects a missing dependency, naming both plugins', () => {
    const kernel = createKernel().use(plugin('needs', { dependencies: ['absent'] }));
    expect(() => kernel.seal()).toThrow('plugin "needs" depends on "absent", which is not registered');
  });

  it('rejects a dependency registered after its dependent (checked, not sorted)', () => {
    const kernel = createKernel().use(plugin('late-user', { dependencies: ['base'] })).use(plugin('base'));
    expect(() => kernel.seal()).toThrow('plugin "late-user" depends on "base", which must be registered before it');
  });

  it('rejects a `before` that names no tap', () => {
    const kernel = createKernel().use(
      plugin('early', {
        apply(k) {
          k.hooks.contextLoad.tapPromise({ name: 'early', before: 'ghost' }, async (c) => c);
        },
      }),
    );
    expect(() => kernel.seal()).toThrow('plugin "early" taps "contextLoad" before "ghost", but no tap of that name exists');
  });

  it('accepts a `before` that names an existing tap and orders by it', () => {
    const kernel = createKernel()
      .use(plugin('second', { apply: (k) => k.hooks.postTurn.tapPromise('second', async () => {}) }))
      .use(plugin('first', { apply: (k) => k.hooks.postTurn.tapPromise({ name: 'first', before: 'second' }, async () => {}) }))
      .seal();
    expect(kernel.describe()).toContain('postTurn: first → second');
  });

  it('rejects a kernel range this kernel does not satisfy', () => {
    const kernel = createKernel().use(plugin('future', { kernel: '^2.0.0' }));
    expect(() => kernel.seal()).toThrow(`plugin "future" needs kernel ^2.0.0, but this kernel is ${KERNEL_VERSION}`);
  });

  it('rejects an invalid kernel range', () => {
    const kernel = createKernel().use(plugin('garbled', { kernel: 'not a range' }));
    expect(() => kernel.seal()).toThrow('plugin "garbled": kernel range "not a range" is not a valid semver range');
  });

  it("rejects a tap whose name is not its plugin's name", () => {
    const kernel = createKernel().use(
      plugin('honest', {
        apply(k) {
          k.hooks.event.tap('impostor', () => {});
        },
      }),
    );
    expect(() => kernel.seal()).toThrow('plugin "honest" tapped "event" as "impostor": a tap\'s name must be its plugin\'s name');
  });

  it('rejects a name that is not kebab-case', () => {
    const kernel = createKernel().use(plugin('NotKebab'));
    expect(() => kernel.seal()).toThrow('plugin "NotKebab": name must be kebab-case');
  });

  it('refuses taps after seal, so nobody taps inside a hook callback', async () => {
    const kernel = createKernel()
      .use(
        plugin('sneaky', {
          apply(k) {
            k.hooks.toolExecute.tapPromise('sneaky', async () => {
              k.hooks.event.tap('sneaky', () => {});
              return undefined;
            });
          },
        }),
      )
      .seal();
    await expect(kernel.hooks.toolExecute.promise({} as never, {} as never)).rejects.toThrow(
      /plugin "sneaky" failed in hook "toolExecute": cannot tap "event" as "sneaky" after the kernel is sealed/,
    );
  });

  it('refuses use() after seal and non-plugins', () => {
    const kernel = createKernel();
    const factory = definePlugin(() => plugin('later'));
    expect(() => kernel.use(factory as never)).toThrow(/did you forget to call the plugin factory/);
    kernel.seal();
    expect(() => kernel.use(factory())).toThrow('cannot use plugin "later": the kernel is sealed');
  });

  it('names both owners when two plugins register the same tool', () => {
    const tool = { name: 'same', description: '', permission: 'read', input: {} as never, execute: async () => ({ content: '' }) } as const;
    const kernel = createKernel().use(plugin('one', { apply: (k) => k.tools.register(tool) }));
    expect(() => kernel.use(plugin('two', { apply: (k) => k.tools.register(tool) }))).toThrow(
      'plugin "two" failed to apply: tool "same" from two is already registered by one',
    );
  });

  it('exposes stage constants in order', () => {
    expect(Stage.FIRST < Stage.EARLY && Stage.EARLY < Stage.NORMAL && Stage.NORMAL < Stage.LATE && Stage.LATE < Stage.LAST).toBe(true);
    expect(Object.isFrozen(Stage)).toBe(true);
  });
});
