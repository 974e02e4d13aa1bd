import { z } from 'zod';
import { definePlugin, defineTool, type AppState } from '../../kernel/index.js';

const item = z.object({
  content: z.string().min(1).describe('The task, imperative ("Fix the parser")'),
  status: z.enum(['pending', 'in_progress', 'completed']),
  activeForm: z.string().optional().describe('Present continuous, shown while in progress ("Fixing the parser")'),
});

const input = z.object({ todos: z.array(item).describe('The whole list; it replaces the previous one') });

type Todos = AppState['todos'];

/** todo_write: the session's task list, kept in `kernel.state.todos` where frontends and compaction read it. */
export default definePlugin(() => ({
  name: 'tool-todo',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.tools.register(
      defineTool({
        name: 'todo_write',
        description:
          'Keep a task list for work with three or more steps, so you and the user can follow progress. Send the whole list each time. Mark a task in_progress before starting it (one at a time) and completed as soon as it is done; add tasks you discover. Skip it for simple one-step requests.',
        permission: 'read',
        input,
        async execute(args) {
          const todos: Todos = args.todos.map((t) => ({ content: t.content, status: t.status, ...(t.activeForm ? { activeForm: t.activeForm } : {}) }));
          kernel.state.set({ todos });
          const count = (status: Todos[number]['status']) => todos.filter((t) => t.status === status).length;
          const active = count('in_progress');
          const summary = `Task list saved: ${count('pending')} pending, ${active} in progress, ${count('completed')} completed.`;
          const note = active > 1 ? ` ${active} tasks are in progress; keep one at a time.` : '';
          return { content: summary + note, display: { todos } };
        },
      }),
    );
  },
}));
