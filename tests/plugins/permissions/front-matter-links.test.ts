/**
 * The policy's file-tool path for instruction files (asked only when the front matter would change) and hard
 * links (writes asked in every mode, reads like outside reads, a protected twin asked even in auto mode), and the
 * re-check right before a call runs.
 */
import { linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PermissionMode, Turn } from '../../../kernel/index.js';
import instructions from '../../../plugins/instructions/index.js';
import permissions from '../../../plugins/permissions/index.js';
import { settingsChange } from '../../../plugins/permissions/front-matter.js';
import { hardLinks } from '../../../plugins/permissions/paths.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

async function world(mode: PermissionMode) {
  const kernel = testKernel([instructions(), toolsFs(), permissions()], { keelHome: ws.home });
  const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: mode });
  const turn: Turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
  let n = 0;
  const call = (name: string, input: Record<string, unknown>) => ({ id: `c${++n}`, name, input: kernel.tools.get(name)!.input.parse(input) });
  return {
    decide: async (name: string, input: Record<string, unknown>) => (await kernel.hooks.prePermission.promise(call(name, input), turn))?.behavior,
    /** Permission check, then the toolExecute hook (re-check, then the tool), as the loop runs them. */
    run: async (name: string, input: Record<string, unknown>, between?: () => void) => {
      const c = call(name, input);
      const decision = await kernel.hooks.prePermission.promise(c, turn);
      between?.();
      return { decision: decision?.behavior, result: await kernel.hooks.toolExecute.promise(c, turn) };
    },
  };
}

describe('settingsChange', () => {
  it.each([
    ['write_file', { content: '# body only\n' }, '---\na: 1\n---\nold\n', true],
    ['write_file', { content: '---\na: 1\n---\nnew body\n' }, '---\na: 1\n---\nold\n', false],
    ['write_file', { content: '---\na: 2\n---\nold\n' }, '---\na: 1\n---\nold\n', true],
    ['write_file', { content: 'plain\n' }, undefined, false],
    ['write_file', { content: '---\na: 1\n---\n' }, undefined, true],
    ['edit_file', { old_string: 'old', new_string: 'new' }, '---\na: 1\n---\nold\n', false],
    ['edit_file', { old_string: 'a: 1', new_string: 'a: 2' }, '---\na: 1\n---\nold\n', true],
    ['edit_file', { old_string: 'missing', new_string: 'x' }, '---\na: 1\n---\nold\n', true],
    ['edit_file', { old_string: 'x', new_string: '---\na: 1\n---\nx' }, 'x\n', true],
    ['bash', { command: 'true' }, 'x\n', true],
    // An added @import is a read every later session makes unasked; a mention or a kept import is body text.
    ['edit_file', { old_string: 'old', new_string: 'see @../outside/x.md' }, 'old\n', true],
    ['write_file', { content: 'see @~/.pypirc\n' }, undefined, true],
    ['edit_file', { old_string: 'old', new_string: 'ask @alice' }, 'old\n', false],
    ['edit_file', { old_string: 'old', new_string: 'new' }, 'see @docs/x.md\nold\n', false],
  ] as const)('%s %j on %j → %s', async (tool, input, before, expected) => {
    ws = makeWorkspace();
    const file = ws.path('AGENTS.md');
    if (before !== undefined) writeFileSync(file, before);
    expect((await settingsChange(tool, input, file)) !== undefined).toBe(expected);
  });
});

describe('instruction files under the policy', () => {
  it('edits mode: body edits run, front matter changes and new front matter are asked', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('AGENTS.md', '---\npermission_mode: manual\n---\nbody\n');
    const w = await world('edits');
    expect(await w.decide('edit_file', { path: 'AGENTS.md', old_string: 'body', new_string: 'text' })).toBe('allow');
    expect(await w.decide('edit_file', { path: 'AGENTS.md', old_string: 'manual', new_string: 'auto' })).toBe('ask');
    expect(await w.decide('write_file', { path: 'docs/CLAUDE.md', content: 'just text' })).toBe('allow');
    expect(await w.decide('write_file', { path: 'docs/CLAUDE.md', content: '---\npermission_mode: auto\n---\n' })).toBe('ask');
  });

  it('a body-only edit whose file gained front matter since the check is stopped before it runs', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('AGENTS.md', 'intro\nEND\n');
    const w = await world('auto');
    const { decision, result } = await w.run('edit_file', { path: 'AGENTS.md', old_string: 'END', new_string: '---' }, () =>
      writeFileSync(ws.path('AGENTS.md'), '---\npermission_mode: auto\nEND\n'),
    );
    expect(decision).toBe('allow');
    expect(result).toMatchObject({ isError: true, content: expect.stringContaining('would now change its front matter') });
    expect(readFileSync(ws.path('AGENTS.md'), 'utf8')).toBe('---\npermission_mode: auto\nEND\n');
  });
});

describe('hard links under the policy', () => {
  function linked() {
    ws = makeWorkspace({ git: true });
    const outside = path.join(path.dirname(ws.dir), 'outside.txt');
    writeFileSync(outside, 'outside\n');
    linkSync(outside, ws.path('linked.txt'));
    ws.write('plain.txt', 'plain\n');
  }

  it('hardLinks counts regular files only', () => {
    linked();
    expect(hardLinks(ws.path('linked.txt'))).toBe(2);
    expect(hardLinks(ws.path('plain.txt'))).toBe(1);
    expect(hardLinks(ws.dir)).toBe(1);
    expect(hardLinks(ws.path('missing'))).toBe(1);
  });

  it.each(['auto', 'edits', 'ask', 'manual'] as const)('%s mode: a write to a hard-linked file is asked', async (mode) => {
    linked();
    expect(await (await world(mode)).decide('write_file', { path: 'linked.txt', content: 'x' })).toBe('ask');
  });

  it('reads: asked like outside reads, allowed in auto mode unless the other name is protected', async () => {
    linked();
    expect(await (await world('edits')).decide('read_file', { path: 'linked.txt' })).toBe('ask');
    expect(await (await world('auto')).decide('read_file', { path: 'linked.txt' })).toBe('allow');
    mkdirSync(path.join(ws.home, 'sessions'));
    writeFileSync(path.join(ws.home, 'sessions', 'log.jsonl'), '{}\n');
    linkSync(path.join(ws.home, 'sessions', 'log.jsonl'), ws.path('log.txt'));
    expect(await (await world('auto')).decide('read_file', { path: 'log.txt' })).toBe('ask');
  });

  it('a file that gains a hard link between the check and the call is not written', async () => {
    linked();
    const w = await world('auto');
    const { decision, result } = await w.run('write_file', { path: 'fresh.txt', content: 'x' }, () => {
      writeFileSync(ws.path('fresh.txt'), 'was\n');
      linkSync(ws.path('fresh.txt'), ws.path('fresh-alias.txt'));
    });
    expect(decision).toBe('allow');
    expect(result).toMatchObject({ isError: true, content: expect.stringContaining('gained hard links') });
    expect(readFileSync(ws.path('fresh.txt'), 'utf8')).toBe('was\n');
  });
});
