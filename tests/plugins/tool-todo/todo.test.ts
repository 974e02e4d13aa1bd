import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageParam } from '../../../kernel/index.js';
import toolTodo, { lastTodos } from '../../../plugins/tool-todo/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness as sessionHarness } from '../session-store/setup.js';
import { harness, textOf, type Harness } from '../tools-fs/harness.js';

let h: Harness;
beforeEach(async () => {
  h = await harness([toolTodo()]);
});
afterEach(() => h.cleanup());

describe('todo_write', () => {
  it('replaces the task list in kernel.state and summarises it', async () => {
    const seen: unknown[] = [];
    h.kernel.state.subscribe((state) => seen.push(state.todos));
    const first = await h.run('todo_write', {
      todos: [
        { content: 'Read the parser', status: 'completed' },
        { content: 'Fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' },
        { content: 'Run the tests', status: 'pending' },
      ],
    });
    expect(textOf(first)).toBe('Task list saved: 1 pending, 1 in progress, 1 completed.');
    expect(h.kernel.state.get().todos).toEqual([
      { content: 'Read the parser', status: 'completed' },
      { content: 'Fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' },
      { content: 'Run the tests', status: 'pending' },
    ]);
    expect(seen).toHaveLength(1);
    await h.run('todo_write', { todos: [{ content: 'Only one', status: 'pending' }] });
    expect(h.kernel.state.get().todos).toEqual([{ content: 'Only one', status: 'pending' }]);
  });

  it('notes more than one task in progress', async () => {
    const result = await h.run('todo_write', {
      todos: [
        { content: 'a', status: 'in_progress' },
        { content: 'b', status: 'in_progress' },
      ],
    });
    expect(textOf(result)).toBe('Task list saved: 0 pending, 2 in progress, 0 completed. 2 tasks are in progress; keep one at a time.');
  });

  it('rejects an unknown status and empty content', () => {
    const input = h.kernel.tools.get('todo_write')!.input;
    expect(input.safeParse({ todos: [{ content: 'a', status: 'done' }] }).error?.issues[0].path).toEqual(['todos', 0, 'status']);
    expect(input.safeParse({ todos: [{ content: '', status: 'pending' }] }).error?.issues[0].path).toEqual(['todos', 0, 'content']);
  });
});

describe('todo_write across a resume', () => {
  const list = (status: 'pending' | 'completed') => ({ todos: [{ content: 'Fix the parser', status }, { content: 'Run the tests', status: 'pending' }] });
  let ws: Workspace;
  let server: ScriptedServer | undefined;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    ws.cleanup();
  });

  it('rebuilds the list from the last successful todo_write when the session is resumed; a new session starts empty', async () => {
    server = await startAnthropicServer([
      callTool('todo_write', list('pending')),
      callTool('todo_write', list('completed')),
      // Invalid input: it fails and saves nothing, so the list before it stands.
      callTool('todo_write', { todos: [{ content: 'x', status: 'bogus' }] }),
      say('done'),
    ]);
    const first = sessionHarness(server, ws, {}, [toolTodo()]);
    const session = await first.start();
    await first.run(session, 'plan it');
    expect(first.kernel.state.get().todos).toEqual(list('completed').todos);
    first.store.close(session);

    const second = sessionHarness(server, ws, {}, [toolTodo()]);
    expect(second.kernel.state.get().todos).toEqual([]);
    const resumed = await second.start({ resume: { id: session.id } });
    expect(second.kernel.state.get().todos).toEqual(list('completed').todos);
    second.store.close(resumed);

    const fresh = await second.start();
    expect(second.kernel.state.get().todos).toEqual([]);
    second.store.close(fresh);
  });

  it('passes over calls whose result was an error', () => {
    const use = (id: string, status: 'pending' | 'completed') => ({ type: 'tool_use' as const, id, name: 'todo_write', input: list(status) });
    const messages: MessageParam[] = [
      { role: 'assistant', content: [use('a', 'pending')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'saved' }] },
      { role: 'assistant', content: [use('b', 'completed')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b', content: 'Permission denied', is_error: true }] },
    ];
    expect(lastTodos(messages)).toEqual(list('pending').todos);
    expect(lastTodos([])).toBeUndefined();
  });
});
