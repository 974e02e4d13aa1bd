/** A tasks file (JSON Lines, one task a line), validated whole before anything is queued. */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const taskSchema = z
  .object({
    // BullMQ's custom job ids may not be plain integers and may not hold ':' (its key separator).
    id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'letters, digits, ".", "_" and "-" only, starting with a letter or digit (at most 128)')
      .refine((id) => !/^\d+$/.test(id), 'must not be a plain number')
      .optional(),
    // Never read as an option by git (`--upload-pack=…`).
    repo: z.string().min(1).refine((v) => !v.startsWith('-'), 'must not start with "-"').optional(),
    ref: z.string().min(1).refine((v) => !v.startsWith('-'), 'must not start with "-"').optional(),
    cwd: z.string().min(1).optional(),
    prompt: z.string().min(1),
    preset: z.string().min(1).optional(),
    permissionMode: z.enum(['auto', 'edits', 'ask', 'manual', 'plan', 'default', 'acceptEdits', 'bypassPermissions']).optional(),
    maxTurns: z.number().int().positive().optional(),
    maxBudgetUsd: z.number().positive().optional(),
    jsonSchema: z.record(z.string(), z.unknown()).optional(),
    env: z.array(z.string().regex(ENV_NAME, 'an environment variable name')).optional(),
  })
  .strict()
  .superRefine((task, ctx) => {
    if (!task.repo === !task.cwd) ctx.addIssue({ code: 'custom', message: 'give exactly one of "repo" (with "ref") or "cwd"', path: task.repo ? ['cwd'] : ['repo'] });
    if (task.jsonSchema) {
      try {
        z.fromJSONSchema(task.jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `not a JSON Schema zod can read: ${(err as Error).message}`, path: ['jsonSchema'] });
      }
    }
  });

export type TaskInput = z.infer<typeof taskSchema>;
/** A task as queued: an id, absolute local paths, and the session its runs use. */
export type Task = TaskInput & { id: string; sessionId: string };

/**
 * Parses a whole file. Any bad line fails the file with one line naming it: `tasks.jsonl: line 3: prompt: …`.
 * Relative `cwd` and local `repo` paths are resolved against `base` (the submitter's folder), for workers to find.
 */
export function parseTasks(text: string, source: string, base: string): Task[] {
  const tasks: Task[] = [];
  const seen = new Map<string, number>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const at = `${source}: line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new TaskFileError(`${at}: not valid JSON (${(err as Error).message})`);
    }
    const parsed = taskSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.length ? `${issue.path.map(String).join('.')}: ` : '';
      throw new TaskFileError(`${at}: ${field}${issue.message}`);
    }
    const task = parsed.data;
    const id = task.id ?? `t-${randomUUID().slice(0, 13)}`;
    const earlier = seen.get(id);
    if (earlier !== undefined) throw new TaskFileError(`${at}: id "${id}" is also the id of line ${earlier}`);
    seen.set(id, i + 1);
    tasks.push({
      ...task,
      id,
      sessionId: randomUUID(),
      ...(task.cwd ? { cwd: path.resolve(base, task.cwd) } : {}),
      ...(task.repo && isLocalPath(task.repo) ? { repo: path.resolve(base, task.repo) } : {}),
    });
  }
  if (tasks.length === 0) throw new TaskFileError(`${source}: no tasks (one JSON object a line)`);
  return tasks;
}

/** A git URL (scheme://, user@host:path) is left as it is; anything else is a local path. */
function isLocalPath(repo: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(repo) && !/^[^/\s]+@[^/\s]+:/.test(repo);
}

export class TaskFileError extends Error {}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A job's task as a worker finds it in Redis, checked before anything runs: whoever wrote it may not have gone
 * through `submit`. The tasks file's rules, plus what `submit` adds (an id, a session id, absolute local paths).
 * The task, or the first problem as `field: why`.
 */
export function checkQueuedTask(value: unknown): Task | string {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'not an object';
  const { id, sessionId, ...rest } = value as Record<string, unknown>;
  if (typeof id !== 'string' || !ID.test(id) || /^\d+$/.test(id)) return `id: ${JSON.stringify(id)} is not a task id (letters, digits, ".", "_" and "-", starting with a letter or digit)`;
  if (typeof sessionId !== 'string' || !UUID.test(sessionId)) return `sessionId: ${JSON.stringify(sessionId)} is not a UUID`;
  const parsed = taskSchema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${issue.path.length ? `${issue.path.map(String).join('.')}: ` : ''}${issue.message}`;
  }
  const task = parsed.data;
  if (task.cwd && !path.isAbsolute(task.cwd)) return `cwd: ${JSON.stringify(task.cwd)} is not an absolute path`;
  if (task.repo && isLocalPath(task.repo) && !path.isAbsolute(task.repo)) return `repo: ${JSON.stringify(task.repo)} is neither a URL nor an absolute path`;
  return { ...task, id, sessionId };
}

export type { TaskResult } from './keys.js';
