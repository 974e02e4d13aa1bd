import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProtectedPaths, coreProtectedEntries } from '../../../kernel/index.js';
import { literalNames, placeholdersFor, removePlaceholder } from '../../../plugins/sandbox/placeholders.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function surface(home: string): ProtectedPaths {
  const s = new ProtectedPaths();
  for (const e of coreProtectedEntries({ keelHome: path.join(home, '.keel-home'), home })) s.add(e);
  s.add({ segment: /^AGENTS\.md$/, why: 'instructions', frontMatter: true });
  return s;
}

describe('sandbox placeholders', () => {
  it('reads plain literal segment patterns and leaves the rest to the check afterwards', () => {
    expect(literalNames(/^\.git$/)).toEqual(['.git']);
    expect(literalNames(/^agent\.config\.(ts|mjs|json)$/)).toEqual(['agent.config.ts', 'agent.config.mjs', 'agent.config.json']);
    expect(literalNames(/^\.env(?!\.(example))(\.[\w.-]+)?$/)).toBeUndefined();
    expect(literalNames(/settings/)).toBeUndefined();
  });

  it('holds missing protected names in the root and on the way to the working folder, not existing ones, .git or front matter', () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'keel-ph-'));
    dirs.push(base);
    const root = path.join(base, 'p');
    mkdirSync(path.join(root, 'a', 'b'), { recursive: true });
    mkdirSync(path.join(root, 'other'));
    writeFileSync(path.join(root, 'agent.config.ts'), 'export default {}');
    const held = placeholdersFor(surface(base), root, path.join(root, 'a', 'b'), [root]);
    for (const dir of [root, path.join(root, 'a'), path.join(root, 'a', 'b')]) {
      expect(held).toContain(path.join(dir, 'agent.config.mjs'));
      expect(held).toContain(path.join(dir, '.claude'));
      expect(held).toContain(path.join(dir, '.mcp.json'));
    }
    expect(held).not.toContain(path.join(root, 'agent.config.ts'));
    expect(held.some((p) => p.startsWith(path.join(root, 'other')))).toBe(false);
    expect(held.some((p) => p.endsWith('/.git') || p.endsWith('AGENTS.md'))).toBe(false);
  });

  it('holds a missing profile under an allowed home, and removes a placeholder only while it is empty', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'keel-ph-home-'));
    dirs.push(home);
    const root = path.join(home, 'p');
    mkdirSync(root);
    const held = placeholdersFor(surface(home), root, root, [root, home]);
    expect(held).toContain(path.join(home, '.zshrc'));
    const full = path.join(root, '.claude');
    mkdirSync(full);
    writeFileSync(path.join(full, 'settings.json'), '{}');
    removePlaceholder(full);
    expect(existsSync(path.join(full, 'settings.json'))).toBe(true);
    rmSync(path.join(full, 'settings.json'));
    removePlaceholder(full);
    expect(existsSync(full)).toBe(false);
  });
});
