import { describe, expect, it } from 'vitest';
import { todosText } from '../../../plugins/tool-todo/index.js';

describe('/todos', () => {
  it('marks each task by status, shows the active form of the one in progress, and counts what is done', () => {
    expect(
      todosText([
        { content: 'Read the parser', status: 'completed' },
        { content: 'Fix the parser', status: 'in_progress', activeForm: 'Fixing the parser' },
        { content: 'Run the tests', status: 'pending' },
      ]),
    ).toBe('Tasks (1 of 3 done):\n  [x] Read the parser\n  [>] Fixing the parser\n  [ ] Run the tests');
  });

  it('says when there is no list', () => {
    expect(todosText([])).toMatch(/^No tasks/);
  });
});
