/** Keel's todo list (`todo_write`, kept in `kernel.state.todos`) as an ACP plan. */
import type { Plan } from '@agentclientprotocol/sdk';
import type { AppState } from '../../kernel/index.js';

export function toPlan(todos: AppState['todos']): Plan {
  return { entries: todos.map((t) => ({ content: t.content, priority: 'medium', status: t.status })) };
}
