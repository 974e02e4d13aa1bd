import { describe, expect, it } from 'vitest';
import { createKernel, PluginError, Stage, type AgentEvent, type Plugin } from '../../kernel/index.js';

const plugin = (name: string, apply: Plugin['apply']): Plugin => ({ name, kernel: '^1.0.0', apply });

describe('hook error policy', () => {
  it('wraps errors with the plugin and hook name', async () => {
    const kernel = createKernel()
      .use(plugin('broken-provider', (k) => k.hooks.query.tapPromise('broken-provider', async () => { throw new Error('socket closed'); })))
      .seal();
    const failure = kernel.hooks.query.promise({} as never, {} as never);
    await expect(failure).rejects.toBeInstanceOf(PluginError);
    await expect(failure).rejects.toThrow('plugin "broken-provider" failed in hook "query": socket closed');
  });

  it('fails prePermission closed: an error becomes a deny naming the plugin', async () => {
    const kernel = createKernel()
      .use(plugin('flaky-policy', (k) => k.hooks.prePermission.tapPromise('flaky-policy', async () => { throw new Error('rules file unreadable'); })))
      .use(plugin('allow-all', (k) => k.hooks.prePermission.tapPromise('allow-all', async () => ({ behavior: 'allow' }))))
      .seal();
    const decision = await kernel.hooks.prePermission.promise({ id: 't', name: 'bash', input: {} }, {} as never);
    expect(decision).toEqual({
      behavior: 'deny',
      reason: 'permission check failed (plugin "flaky-policy" failed in hook "prePermission": rules file unreadable)',
    });
  });

  it('applies the same policy to callback-style taps, whether they throw or pass an error to their callback', async () => {
    const kernel = createKernel()
      .use(plugin('throws-sync', (k) => k.hooks.prePermission.tapAsync('throws-sync', () => { throw new Error('bad rule'); })))
      .seal();
    expect(await kernel.hooks.prePermission.promise({ id: 't', name: 'bash', input: {} }, {} as never)).toEqual({
      behavior: 'deny',
      reason: 'permission check failed (plugin "throws-sync" failed in hook "prePermission": bad rule)',
    });
    const provider = createKernel()
      .use(plugin('calls-back', (k) => k.hooks.query.tapAsync('calls-back', (_request, _turn, done) => done(new Error('socket closed')))))
      .seal();
    await expect(provider.hooks.query.promise({} as never, {} as never)).rejects.toThrow('plugin "calls-back" failed in hook "query": socket closed');
    const ran: string[] = [];
    const forgiving = createKernel()
      .use(plugin('fails-late', (k) => k.hooks.postTurn.tapAsync('fails-late', (_record, _turn, done) => done(new Error('disk full')))))
      .use(plugin('after', (k) => k.hooks.postTurn.tapAsync('after', (_record, _turn, done) => { ran.push('after'); done(); })))
      .seal();
    await forgiving.hooks.postTurn.promise({} as never, {} as never);
    expect(ran).toEqual(['after']);
  });

  it('logs contextLoad errors and carries on with the context unchanged', async () => {
    const logs: AgentEvent[] = [];
    const kernel = createKernel()
      .use(plugin('watcher', (k) => k.hooks.event.tap('watcher', (e) => { if (e.type === 'log') logs.push(e); })))
      .use(plugin('bad-section', (k) => k.hooks.contextLoad.tapPromise('bad-section', async () => { throw new Error('no such file'); })))
      .use(plugin('good-section', (k) => k.hooks.contextLoad.tapPromise('good-section', async (c) => ({ ...c, system: [...c.system, { type: 'text', text: 'ok' }] }))))
      .seal();
    const context = await kernel.hooks.contextLoad.promise({ system: [], messages: [], budget: { window: 1, used: 0, maxOutput: 1 } }, {} as never);
    expect(context.system).toEqual([{ type: 'text', text: 'ok' }]);
    expect(logs).toEqual([
      expect.objectContaining({ level: 'error', message: 'plugin "bad-section" failed in hook "contextLoad": no such file', source: 'bad-section' }),
    ]);
  });

  it('logs postTurn errors and runs the later taps', async () => {
    const ran: string[] = [];
    const kernel = createKernel()
      .use(plugin('first', (k) => k.hooks.postTurn.tapPromise('first', async () => { throw new Error('disk full'); })))
      .use(plugin('second', (k) => k.hooks.postTurn.tapPromise('second', async () => { ran.push('second'); })))
      .seal();
    await kernel.hooks.postTurn.promise({} as never, {} as never);
    expect(ran).toEqual(['second']);
  });

  it('keeps event observers isolated from each other', () => {
    const seen: string[] = [];
    const kernel = createKernel()
      .use(plugin('throws', (k) => k.hooks.event.tap('throws', () => { throw new Error('render failed'); })))
      .use(plugin('listens', (k) => k.hooks.event.tap('listens', (e) => { seen.push(e.type); })))
      .seal();
    const original = process.emitWarning;
    const warnings: string[] = [];
    process.emitWarning = ((w: string | Error) => { warnings.push(String(w)); }) as typeof process.emitWarning;
    try {
      kernel.emit({ type: 'turn_start', turn: 1 });
    } finally {
      process.emitWarning = original;
    }
    expect(seen).toEqual(['turn_start']);
    expect(warnings[0]).toContain('plugin "throws" failed in hook "event": render failed');
  });
});

describe('describe()', () => {
  it('lists every hook with its taps in call order, stages shown', () => {
    const kernel = createKernel()
      .use(plugin('late', (k) => k.hooks.contextLoad.tapPromise({ name: 'late', stage: Stage.LATE }, async (c) => c)))
      .use(plugin('early', (k) => k.hooks.contextLoad.tapPromise({ name: 'early', stage: Stage.EARLY }, async (c) => c)))
      .use(plugin('plain', (k) => k.hooks.contextLoad.tapPromise('plain', async (c) => c)))
      .seal();
    const lines = kernel.describe().split('\n');
    expect(lines).toContain('contextLoad: early@-100 → plain → late@100');
    expect(lines.map((l) => l.split(':')[0])).toEqual([
      'sessionStart', 'contextLoad', 'selectTools', 'prePermission', 'query', 'toolExecute', 'toolResult', 'postTurn', 'askUser', 'event',
    ]);
    expect(Object.isFrozen(kernel.hooks)).toBe(true);
  });
});

describe('kernel.state', () => {
  it('notifies subscribers until they unsubscribe', () => {
    const kernel = createKernel();
    const loading: boolean[] = [];
    const listener = (s: { isLoading: boolean }) => loading.push(s.isLoading);
    const off = kernel.state.subscribe(listener);
    kernel.state.set({ isLoading: true });
    off();
    kernel.state.set({ isLoading: false });
    kernel.state.subscribe(listener);
    kernel.state.unsubscribe(listener);
    kernel.state.set({ isLoading: true });
    expect(loading).toEqual([true]);
    expect(kernel.state.get().isLoading).toBe(true);
  });
});
