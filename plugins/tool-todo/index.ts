import { z } from 'zod';
import { definePlugin, defineTool, Stage, type AppState, type MessageParam } from '../../kernel/index.js';

const NAME = 'tool-todo';

const item = z.object({
  content: z.string().min(1).describe('The task, imperative ("Fix the parser")'),
  status: z.enum(['pending', 'in_progress', 'completed']),
  activeForm: z.string().optional().describe('Present continuous, shown while in progress ("Fixing the parser")'),
});

const input = z.object({ todos: z.array(item).describe('The whole list; it replaces the previous one') });

type Todos = AppState['todos'];

const toTodos = (args: z.infer<typeof input>): Todos =>
  args.todos.map((t) => ({ content: t.content, status: t.status, ...(t.activeForm ? { activeForm: t.activeForm } : {}) }));

/**
 * The list the last successful `todo_write` in `messages` saved, or undefined when there is none (a call whose
 * result was an error, or whose input is not a valid list, did not save anything and is passed over).
 */
export function lastTodos(messages: readonly MessageParam[]): Todos | undefined {
  const failed = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const content = messages[i]!.content;
    if (typeof content === 'string') continue;
    for (let j = content.length - 1; j >= 0; j--) {
      const block = content[j]!;
      if (block.type === 'tool_result' && block.is_error) failed.add(block.tool_use_id);
      if (block.type !== 'tool_use' || block.name !== 'todo_write' || failed.has(block.id)) continue;
      const parsed = input.safeParse(block.input);
      if (parsed.success) return toTodos(parsed.data);
    }
  }
  return undefined;
}

/** The task list as text: one line per task with its status mark. */
export function todosText(todos: Todos): string {
  if (todos.length === 0) return 'No tasks: the model keeps a task list (todo_write) for work with several steps.';
  const mark = { completed: '[x]', in_progress: '[>]', pending: '[ ]' } as const;
  const done = todos.filter((t) => t.status === 'completed').length;
  return [`Tasks (${done} of ${todos.length} done):`, ...todos.map((t) => `  ${mark[t.status]} ${t.status === 'in_progress' && t.activeForm ? t.activeForm : t.content}`)].join('\n');
}

/** todo_write: the session's task list, kept in `kernel.state.todos` where frontends and compaction read it. */
export default definePlugin(() => ({
  name: NAME,
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
          const todos = toTodos(args);
          kernel.state.set({ todos });
          const count = (status: Todos[number]['status']) => todos.filter((t) => t.status === status).length;
          const active = count('in_progress');
          const summary = `Task list saved: ${count('pending')} pending, ${active} in progress, ${count('completed')} completed.`;
          const note = active > 1 ? ` ${active} tasks are in progress; keep one at a time.` : '';
          return { content: summary + note, display: { todos } };
        },
      }),
    );

    kernel.commands.register({
      name: 'todos',
      description: "show the session's task list (the model keeps it with todo_write)",
      run: async () => todosText(kernel.state.get().todos),
    });

    // The list belongs to the session: a new one starts empty, a resumed one gets back the list its history
    // last saved. LATE, so the session store has loaded the history first.
    kernel.hooks.sessionStart.tapPromise({ name: NAME, stage: Stage.LATE }, async (session) => {
      kernel.state.set({ todos: lastTodos(session.messages) ?? [] });
    });
  },
}));
