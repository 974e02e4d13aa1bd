/** grep, glob and ls leave out what a deny rule or the protected secrets keep from being read. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult, Turn } from '../../../kernel/index.js';
import permissions from '../../../plugins/permissions/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
beforeAll(() => {
  ws = makeWorkspace({ git: true });
  ws.write('.env', 'TOKEN=CANARY-ENV\n');
  ws.write('src/app.ts', 'const TOKEN = process.env.TOKEN;\n');
  ws.write('secrets/key.txt', 'TOKEN=CANARY-KEY\n');
  ws.write('keel-home/auth.json', '{"TOKEN":"CANARY-AUTH"}\n');
});
afterAll(() => ws.cleanup());

async function tools(deny: string[], withPermissions = true) {
  const kernel = testKernel([toolsFs({ grep: 'js' }), ...(withPermissions ? [permissions()] : [])], { keelHome: ws.path('keel-home'), permissions: { allow: [], ask: [], deny } });
  const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'auto' });
  const turn: Turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
  return async (name: string, input: Record<string, unknown>): Promise<string> => {
    const tool = kernel.tools.get(name)!;
    const call = { id: 'c1', name, input };
    const result: ToolResult = await tool.execute(tool.input.parse(input), { signal: turn.signal, session, turn, call, kernel, cwd: ws.dir, emit: () => undefined });
    return typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  };
}

describe('path-policy service', () => {
  it('grep leaves out denied and protected files, and says so', async () => {
    const run = await tools(['read_file(.env)', 'read_file(secrets/**)']);
    const out = await run('grep', { pattern: 'TOKEN', output_mode: 'content' });
    expect(out).toContain('src/app.ts');
    expect(out).not.toMatch(/CANARY/);
    expect(out).toMatch(/3 more matching files were left out/);
  });
  it('glob and ls leave them out too', async () => {
    const run = await tools(['read_file(.env)']);
    const globbed = await run('glob', { pattern: '**/*' });
    expect(globbed).toContain('src/app.ts');
    expect(globbed).not.toContain('.env');
    expect(globbed).not.toContain('auth.json');
    const listed = await run('ls', {});
    expect(listed).not.toContain('.env');
    expect(listed).toMatch(/2 entries were left out: the permission rules/);
    expect(listed).not.toContain('keel-home');
  });
  it('without the permissions plugin nothing is left out', async () => {
    const run = await tools([], false);
    expect(await run('grep', { pattern: 'CANARY', output_mode: 'content' })).toMatch(/CANARY-ENV/);
  });
});
