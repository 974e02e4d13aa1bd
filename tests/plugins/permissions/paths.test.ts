import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { savedOutputDir, type PermissionMode } from '../../../kernel/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { isInside, resolveReal } from '../../../plugins/permissions/paths.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import permissions from '../../../plugins/permissions/index.js';
import type { Turn } from '../../../kernel/index.js';

let ws: Workspace;
let outside: string;
beforeAll(() => {
  ws = makeWorkspace({ git: true });
  outside = path.join(path.dirname(ws.dir), 'outside');
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  mkdirSync(`${ws.dir}-evil`);
  writeFileSync(path.join(`${ws.dir}-evil`, 'a.txt'), 'evil');
  ws.write('src/a.txt', 'hello\n');
  ws.write('.keel/memory/topic.md', '# topic\n');
  symlinkSync(outside, ws.path('link-out'));
  symlinkSync(path.join(outside, 'new.txt'), ws.path('dangling-out'));
  symlinkSync(ws.path('src'), ws.path('link-in'));
  symlinkSync(ws.path('.git'), ws.path('git-alias'));
});
afterAll(() => {
  ws.cleanup();
});

/** The real file tools (plugins/tools-fs) under the permissions plugin. */
async function real(mode: PermissionMode, keelHome = ws.home) {
  const kernel = testKernel([toolsFs(), permissions()], { keelHome });
  const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: mode });
  const turn: Turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
  let n = 0;
  return {
    kernel,
    turn,
    decide: async (name: string, input: Record<string, unknown>) =>
      (await kernel.hooks.prePermission.promise({ id: `c${++n}`, name, input: kernel.tools.get(name)!.input.parse(input) }, turn))?.behavior,
  };
}

describe('containment', () => {
  it('prefix confusion: /ws-evil is not inside /ws', () => {
    expect(isInside(`${ws.dir}-evil/a.txt`, ws.dir)).toBe(false);
    expect(isInside(ws.dir, ws.dir)).toBe(true);
    expect(isInside(path.join(ws.dir, '..foo'), ws.dir)).toBe(true);
  });
  it('resolves symlinks, dangling links and missing tails', () => {
    expect(resolveReal(ws.path('link-out/secret.txt'))).toBe(path.join(resolveReal(outside), 'secret.txt'));
    expect(resolveReal(ws.path('dangling-out'))).toBe(path.join(resolveReal(outside), 'new.txt'));
    expect(resolveReal(ws.path('link-out/new/deeper.txt'))).toBe(path.join(resolveReal(outside), 'new', 'deeper.txt'));
  });
});

const ESCAPES = [
  ['..', '../outside/secret.txt'],
  ['.. inside a path', 'src/../../outside/secret.txt'],
  ['prefix confusion', '<project>-evil/a.txt'],
  ['symlink out', 'link-out/secret.txt'],
  ['absolute outside', '/etc/hostname'],
  ['home', '~/.keel-test-nothing'],
];
/** The project's path is known only once the workspace exists. */
const at = (p: string) => p.replace('<project>', ws.dir);

describe('path corpus through the real file tools (ask mode)', () => {
  for (const [label, p] of ESCAPES) {
    it(`read_file ${label} → ask`, async () => expect(await (await real('ask')).decide('read_file', { path: at(p) })).toBe('ask'));
    it(`grep ${label} → ask`, async () => expect(await (await real('ask')).decide('grep', { pattern: 'x', path: at(p) })).toBe('ask'));
    it(`glob ${label} → ask`, async () => expect(await (await real('ask')).decide('glob', { pattern: '*', path: at(p) })).toBe('ask'));
  }
  it('reads inside the project (also through an inside symlink) are allowed', async () => {
    const h = await real('ask');
    expect(await h.decide('read_file', { path: 'src/a.txt' })).toBe('allow');
    expect(await h.decide('read_file', { path: 'link-in/a.txt' })).toBe('allow');
    expect(await h.decide('glob', { pattern: '**/*.ts' })).toBe('allow');
    expect(await h.decide('grep', { pattern: 'x' })).toBe('allow');
  });
});

describe('path corpus for writes (edits mode: writes inside run, outside are asked)', () => {
  for (const [label, p] of [...ESCAPES, ['dangling symlink out', 'dangling-out']]) {
    it(`write_file ${label} → ask`, async () => expect(await (await real('edits')).decide('write_file', { path: at(p), content: 'x' })).toBe('ask'));
    it(`edit_file ${label} → ask`, async () =>
      expect(await (await real('edits')).decide('edit_file', { path: at(p), old_string: 'a', new_string: 'b' })).toBe('ask'));
  }
  it('writes inside the project run', async () => {
    const h = await real('edits');
    expect(await h.decide('write_file', { path: 'src/new.txt', content: 'x' })).toBe('allow');
    expect(await h.decide('edit_file', { path: 'link-in/a.txt', old_string: 'hello', new_string: 'bye' })).toBe('allow');
  });
  it('auto mode writes outside the project without asking', async () => {
    expect(await (await real('auto')).decide('write_file', { path: '../outside/x.txt', content: 'x' })).toBe('allow');
  });
});

describe('always-asked paths (even in auto mode)', () => {
  const cases: Array<[string, string]> = [
    ['.git/hooks', '.git/hooks/pre-commit'],
    ['.git/config', '.git/config'],
    ['a symlink to .git', 'git-alias/config'],
    ['a nested repository', 'vendor/lib/.git/config'],
    ['.keel state', '.keel/settings.json'],
    ['agent.config.ts', 'agent.config.ts'],
    ['a nested agent.config.mjs', 'packages/a/agent.config.mjs'],
    ['~/.bashrc', '~/.bashrc'],
    ['~/.zshrc', '~/.zshrc'],
  ];
  for (const [label, p] of cases) {
    it(`${label} → ask`, async () => expect(await (await real('auto')).decide('write_file', { path: p, content: 'x' })).toBe('ask'));
  }
  it('KEEL_HOME is asked for writes and reads (it holds trust and the API key)', async () => {
    const h = await real('auto');
    expect(await h.decide('write_file', { path: path.join(ws.home, 'trusted-folders.json'), content: '{}' })).toBe('ask');
    expect(await h.decide('read_file', { path: path.join(ws.home, 'auth.json') })).toBe('ask');
  });
  it("outputs Keel saved for this session stay readable, but not writable; another session's are asked", async () => {
    const h = await real('ask');
    const saved = path.join(savedOutputDir(ws.home, h.turn.session.id), 'call-1.txt');
    const other = path.join(ws.home, 'tool-outputs', 'other-session', 'call-1.txt');
    for (const file of [saved, other]) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, 'line\n');
    }
    expect(await h.decide('read_file', { path: saved })).toBe('allow');
    expect(await h.decide('grep', { pattern: 'line', path: path.dirname(saved) })).toBe('allow');
    expect(await h.decide('write_file', { path: saved, content: 'x' })).toBe('ask');
    expect(await h.decide('read_file', { path: other })).toBe('ask');
    expect(await h.decide('read_file', { path: path.join(ws.home, 'tool-outputs') })).toBe('ask');
    expect(await h.decide('read_file', { path: path.join(path.dirname(saved), '..', 'other-session', 'call-1.txt') })).toBe('ask');
    expect(await h.decide('read_file', { path: path.join(ws.home, 'tool-outputs', '..', 'auth.json') })).toBe('ask');
  });
  it('.keel/memory/ is an ordinary project folder', async () => {
    const h = await real('auto');
    expect(await h.decide('write_file', { path: '.keel/memory/topic.md', content: 'x' })).toBe('allow');
    expect(await (await real('edits')).decide('edit_file', { path: '.keel/memory/topic.md', old_string: 'topic', new_string: 't' })).toBe('allow');
  });
  it('reading .git is fine', async () => {
    expect(await (await real('ask')).decide('read_file', { path: '.git/HEAD' })).toBe('allow');
  });
});

describe('check-then-use', () => {
  it('a symlink swapped after the check stops the call', async () => {
    const swap = ws.path('swap');
    symlinkSync(ws.path('src'), swap);
    try {
      const h = await real('edits');
      const call = { id: 'swap1', name: 'write_file', input: { path: 'swap/x.txt', content: 'pwned' } };
      expect((await h.kernel.hooks.prePermission.promise(call, h.turn))?.behavior).toBe('allow');
      rmSync(swap);
      symlinkSync(outside, swap);
      const result = await h.kernel.hooks.toolExecute.promise(call, h.turn);
      expect(result).toEqual({ isError: true, content: expect.stringContaining('now resolves to') });
    } finally {
      rmSync(swap, { force: true });
    }
  });
  it('an unchanged path runs', async () => {
    const h = await real('edits');
    const call = { id: 'same', name: 'write_file', input: { path: 'src/y.txt', content: 'ok' } };
    expect((await h.kernel.hooks.prePermission.promise(call, h.turn))?.behavior).toBe('allow');
    expect(await h.kernel.hooks.toolExecute.promise(call, h.turn)).toBeUndefined();
  });
  it('home is where ~ resolves', () => {
    expect(resolveReal(os.homedir())).toBe(resolveReal(path.resolve(os.homedir())));
  });
});
