import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script without types
import { currentReadmeSection, hookReference } from '../../scripts/hook-reference.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe("the README's hook reference", () => {
  it('matches kernel/hooks.ts (regenerate with node scripts/hook-reference.mjs --write)', () => {
    const table = hookReference(readFileSync(path.join(root, 'kernel', 'hooks.ts'), 'utf8'));
    expect(currentReadmeSection(readFileSync(path.join(root, 'README.md'), 'utf8'))).toBe(table);
    expect(table.split('\n')).toHaveLength(2 + 10);
  });
});
