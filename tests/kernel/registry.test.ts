import { describe, expect, it } from 'vitest';
import { Registry } from '../../kernel/registry.js';

interface Entry {
  name: string;
}

describe('Registry.settle', () => {
  it('returns an entry at once, waits for late attachers otherwise, and skips a waiter that fails', async () => {
    const registry = new Registry<Entry>('command');
    registry.register({ name: 'now' });
    const asked: string[] = [];
    registry.whenAttached(async (name) => {
      asked.push(name);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (name === 'mcp__s__p') registry.attach({ name }, 'late');
    });
    registry.whenAttached(async () => {
      throw new Error('server gone');
    });
    expect(await registry.settle('now')).toEqual({ name: 'now' });
    expect(asked).toEqual([]);
    expect(await registry.settle('mcp__s__p')).toEqual({ name: 'mcp__s__p' });
    expect(await registry.settle('missing')).toBeUndefined();
    expect(asked).toEqual(['mcp__s__p', 'missing']);
  });
});
