/**
 * Hooks of the same shape share one compiled call function (kernel/hooks.ts): each kernel still calls its own
 * taps, and a hook of another shape gets its own function.
 */
import { describe, expect, it } from 'vitest';
import { createHooks } from '../../kernel/hooks.js';

describe('compiled hook calls', () => {
  it('are shared between hooks of one shape, each calling its own taps', async () => {
    const a = createHooks();
    const b = createHooks();
    a.postTurn.tapPromise('one', async (record) => void (record as unknown as string[]).push('a1'));
    b.postTurn.tapPromise('one', async (record) => void (record as unknown as string[]).push('b1'));
    const seenA: string[] = [];
    const seenB: string[] = [];
    await a.postTurn.promise(seenA as never, {} as never);
    await b.postTurn.promise(seenB as never, {} as never);
    expect(seenA).toEqual(['a1']);
    expect(seenB).toEqual(['b1']);
    expect(a.postTurn.promise).toBe(b.postTurn.promise);
  });

  it('are not shared between shapes: tap types, counts, bail results and interceptors', async () => {
    const sync = createHooks();
    const promise = createHooks();
    const two = createHooks();
    const intercepted = createHooks();
    sync.prePermission.tap('p', () => ({ decision: 'allow' }) as never);
    promise.prePermission.tapPromise('p', async () => ({ decision: 'deny', reason: 'no' }) as never);
    two.prePermission.tap('p', () => undefined);
    two.prePermission.tapPromise('q', async () => ({ decision: 'ask' }) as never);
    const calls: string[] = [];
    intercepted.prePermission.intercept({ call: () => void calls.push('call') });
    intercepted.prePermission.tap('p', () => ({ decision: 'allow' }) as never);
    expect(await sync.prePermission.promise({} as never, {} as never)).toEqual({ decision: 'allow' });
    expect(await promise.prePermission.promise({} as never, {} as never)).toEqual({ decision: 'deny', reason: 'no' });
    expect(await two.prePermission.promise({} as never, {} as never)).toEqual({ decision: 'ask' });
    expect(await intercepted.prePermission.promise({} as never, {} as never)).toEqual({ decision: 'allow' });
    expect(calls).toEqual(['call']);
    expect(new Set([sync, promise, two, intercepted].map((h) => h.prePermission.promise)).size).toBe(4);
  });

  it('follow a hook’s taps when they change after its first call', () => {
    const hooks = createHooks();
    const seen: string[] = [];
    hooks.event.tap('one', () => void seen.push('one'));
    hooks.event.call({ type: 'log' } as never);
    hooks.event.tap('two', () => void seen.push('two'));
    hooks.event.call({ type: 'log' } as never);
    expect(seen).toEqual(['one', 'one', 'two']);
  });
});
