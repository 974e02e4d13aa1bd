import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolTodo from '../../../plugins/tool-todo/index.js';
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
