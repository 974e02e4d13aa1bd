/**
 * When permissions asks about edit_file or write_file, the question carries the diff. The real file tools run
 * after "Allow once", so the preview is checked against the diff the tool itself reports.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Answer, type Plugin, type Question } from '../../../kernel/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let server: ScriptedServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  server = undefined;
  ws = undefined;
});

/** Answers every question with allow_once and keeps the questions. */
function allowOnce(asked: Question[]): Plugin {
  return {
    name: 'test-frontend',
    kernel: '^1.0.0',
    apply(k) {
      k.hooks.askUser.tapPromise('test-frontend', async (q): Promise<Answer> => {
        asked.push(q);
        return { kind: 'permission', choice: 'allow_once' };
      });
    },
  };
}

async function askAbout(calls: Array<{ name: string; input: Record<string, unknown> }>, files: Record<string, string>) {
  server = await startAnthropicServer([...calls.map((c, i) => callTool(c.name, c.input, `t${i + 1}`)), say('done')]);
  ws = makeWorkspace();
  for (const [name, content] of Object.entries(files)) ws.write(name, content);
  const asked: Question[] = [];
  const displays: Array<Record<string, unknown> | undefined> = [];
  const kernel = testKernel([queryAnthropic(), toolsFs(), permissions(), allowOnce(asked)], { baseURL: server.url });
  kernel.observe((e) => {
    if (e.type === 'tool_end') displays.push(e.result.display);
  });
  const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'ask' });
  await runAgent(kernel, session, 'edit');
  const previews = asked.map((q) => (q.kind === 'permission' ? q.preview : undefined));
  return { previews, displays, asked };
}

describe('permissions: the diff of an asked edit', () => {
  it('edit_file: askUser receives the diff edit_file then applies', async () => {
    const { previews, displays } = await askAbout([{ name: 'edit_file', input: { path: 'a.ts', old_string: 'two', new_string: 'TWO' } }], {
      'a.ts': 'one\ntwo\nthree\n',
    });
    expect(previews[0]).toContain('-two\n+TWO');
    expect(previews[0]).toContain('a.ts');
    expect(previews[0]).toBe(displays[0]?.diff);
    expect(readFileSync(ws!.path('a.ts'), 'utf8')).toBe('one\nTWO\nthree\n');
  });

  it('edit_file with several edits, replace_all and a CRLF file', async () => {
    const { previews, displays } = await askAbout(
      [{ name: 'edit_file', input: { path: 'w.txt', edits: [{ old_string: 'a', new_string: 'b', replace_all: true }, { old_string: 'x\ny', new_string: 'z' }] } }],
      { 'w.txt': 'a1\r\na2\r\nx\r\ny\r\n' },
    );
    expect(previews[0]).toMatch(/-a1\n-a2\n-x\n-y\n\+b1\n\+b2\n\+z/);
    expect(previews[0]).toBe(displays[0]?.diff);
  });

  it('edit_file creating a missing file with an empty old_string', async () => {
    const { previews, displays } = await askAbout([{ name: 'edit_file', input: { path: 'new.md', old_string: '', new_string: 'hello\n' } }], {});
    expect(previews[0]).toContain('+hello');
    expect(previews[0]).toBe(displays[0]?.diff);
  });

  it('write_file: the diff against the current file, or the whole content for a new one', async () => {
    const { previews } = await askAbout(
      [
        { name: 'read_file', input: { path: 'old.txt' } },
        { name: 'write_file', input: { path: 'old.txt', content: 'new text\n' } },
        { name: 'write_file', input: { path: 'fresh.txt', content: 'fresh\n' } },
      ],
      { 'old.txt': 'old text\n' },
    );
    expect(previews).toHaveLength(2);
    expect(previews[0]).toMatch(/-old text\n\+new text/);
    expect(previews[1]).toMatch(/\+fresh/);
  });

  it('no preview when the edit would fail (no match), nor for other tools', async () => {
    const { previews, asked } = await askAbout(
      [
        { name: 'edit_file', input: { path: 'a.ts', old_string: 'missing', new_string: 'x' } },
        { name: 'edit_file', input: { path: 'a.ts', old_string: 'dup', new_string: 'x' } },
      ],
      { 'a.ts': 'dup dup\n' },
    );
    expect(asked).toHaveLength(2);
    expect(previews).toEqual([undefined, undefined]);
  });
});
