/** The folders of plugin packages named by a config, what they load, and where their name would be found first. */
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { PackageSource } from '../../../kernel/index.js';
import { packageSurface } from '../../../plugins/permissions/package-surface.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

const source = (dir: string, name: string): PackageSource => ({ kind: 'plugin', provides: 'x', package: name, path: dir, source: 'agent.config.ts', key: 'plugins.0' });

it('covers a pnpm-style linked package by both paths, its dependencies beside it, and the shadowing slots; not a path-like dependency name', () => {
  ws = makeWorkspace();
  const store = ws.path('node_modules/.pnpm/keel-plugin-x@1/node_modules');
  ws.write('node_modules/.pnpm/keel-plugin-x@1/node_modules/keel-plugin-x/package.json', JSON.stringify({ name: 'keel-plugin-x', dependencies: { dep: '1', '../../../outside': '1', missing: '1' } }));
  ws.write('node_modules/.pnpm/keel-plugin-x@1/node_modules/dep/package.json', JSON.stringify({ name: 'dep', peerDependencies: { keel: '*' } }));
  ws.write('node_modules/keel/package.json', JSON.stringify({ name: 'keel' }));
  symlinkSync(path.join(store, 'keel-plugin-x'), ws.path('node_modules/keel-plugin-x'));
  const keelHome = ws.path('home');
  const items = packageSurface([source(ws.path('node_modules/keel-plugin-x'), 'keel-plugin-x')], { projectRoot: ws.dir, cwd: ws.path('sub'), keelHome });
  const paths = items.map((i) => i.path);
  expect(paths).toEqual(expect.arrayContaining([
    ws.path('node_modules/keel-plugin-x'),
    path.join(store, 'keel-plugin-x'),
    path.join(store, 'dep'),
    ws.path('node_modules/keel'),
    ws.path('sub/node_modules/keel-plugin-x'),
    path.join(keelHome, 'node_modules/keel-plugin-x'),
  ]));
  expect(paths.some((p) => p.includes('outside') || p.endsWith('missing'))).toBe(false);
  expect(items.find((i) => i.path === path.join(store, 'dep'))?.why).toMatch(/keel-plugin-x loads \(dep\)/);
});
