/**
 * One task's run: `keel -p … --output-format stream-json` as a child process in the task's checkout, its lines read
 * as they come (turns, last tool → progress; each turn's tool results → a snapshot of the work in progress), its
 * final `result` line kept. A run taken over from a dead worker resumes the task's session.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import type { Task } from './tasks.js';

/** The worker's environment that a run gets; a task adds the names in its `env`. */
const PASSED_ENV = /^(PATH|HOME|USER|LOGNAME|SHELL|LANG|LC_[A-Z]+|TERM|TZ|TMPDIR|NO_COLOR|KEEL_[A-Z0-9_]+|ANTHROPIC_[A-Z0-9_]+|CLAUDE_CODE_[A-Z0-9_]+|OPENAI_[A-Z0-9_]+|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy)$/;

export const RESUME_PROMPT = 'Your previous run of this task was interrupted before it finished (its worker stopped). Continue the task from where it stopped.';

export interface RunEvents {
  onInit(): void;
  onTurn(turns: number, lastTool: string | undefined): void;
}

export interface RunOutcome {
  result?: Record<string, unknown>;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderrTail: string;
}

export interface RunSpec {
  task: Task;
  cwd: string;
  resume: boolean;
  keelCommand: string[];
  preset: string;
  env: NodeJS.ProcessEnv;
  extraEnv: Record<string, string>;
  signal: AbortSignal;
}

/** The environment of a run: the worker's basics, the task's named variables (each must be set), and the fleet's. */
export function runEnv(task: Task, env: NodeJS.ProcessEnv, extra: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && PASSED_ENV.test(key)) out[key] = value;
  for (const name of task.env ?? []) {
    const value = env[name];
    if (value === undefined) throw new MissingEnvError(`task ${task.id}: environment variable ${name} is not set on this worker`);
    out[name] = value;
  }
  return { ...out, ...extra };
}

export class MissingEnvError extends Error {}

export function runArgs(spec: Pick<RunSpec, 'task' | 'resume' | 'preset'>): string[] {
  const { task } = spec;
  const args = ['-p', '--output-format', 'stream-json', '--preset', task.preset ?? spec.preset];
  args.push(...(spec.resume ? ['--resume', task.sessionId] : ['--session-id', task.sessionId]));
  if (task.permissionMode) args.push('--permission-mode', task.permissionMode);
  if (task.maxTurns) args.push('--max-turns', String(task.maxTurns));
  if (task.jsonSchema) {
    args.push('--append-system-prompt', `When you finish, answer with a single JSON value and nothing else, matching this JSON Schema:\n${JSON.stringify(task.jsonSchema)}`);
  }
  // After `--`, so a prompt that starts with "-" is the prompt, never an option (`--config=…` would load code).
  args.push('--', spec.resume ? RESUME_PROMPT : task.prompt);
  return args;
}

export function runTask(spec: RunSpec, events: RunEvents): Promise<RunOutcome> {
  const [command, ...prefix] = spec.keelCommand;
  const env = runEnv(spec.task, spec.env, { ...spec.extraEnv, ...(spec.task.maxBudgetUsd ? { KEEL_FLEET_MAX_BUDGET_USD: String(spec.task.maxBudgetUsd) } : {}) });
  const child = spawn(command, [...prefix, ...runArgs(spec)], { cwd: spec.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let result: Record<string, unknown> | undefined;
  let turns = 0;
  let stderr = '';
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    let message: { type?: string; subtype?: string; message?: { content?: unknown } } & Record<string, unknown>;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.type === 'system' && message.subtype === 'init') events.onInit();
    else if (message.type === 'assistant') {
      turns++;
      const content = Array.isArray(message.message?.content) ? (message.message!.content as Array<{ type?: string; name?: string }>) : [];
      const tools = content.filter((block) => block.type === 'tool_use').map((block) => block.name);
      events.onTurn(turns, tools[tools.length - 1]);
    } else if (message.type === 'result') result = message;
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
  const abort = () => {
    child.kill('SIGTERM');
    // A run that does not stop within its grace is killed.
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  };
  if (spec.signal.aborted) abort();
  else spec.signal.addEventListener('abort', abort, { once: true });
  return new Promise((resolve, reject) => {
    child.on('error', (err) => reject(new Error(`cannot start keel (${spec.keelCommand.join(' ')}): ${err.message}`)));
    child.on('close', (code, signal) => {
      spec.signal.removeEventListener('abort', abort);
      resolve({ result, code, signal, stderrTail: stderr.trim().split('\n').pop() ?? '' });
    });
  });
}

/** Checks a structured answer against the task's schema: its parsed value, or why it does not match. */
export function checkStructured(task: Task, text: string): { value: unknown } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch {
    return { error: 'the answer is not JSON' };
  }
  const schema = z.fromJSONSchema(task.jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
  const parsed = schema.safeParse(value);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  return { error: `the answer does not match the schema: ${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}` };
}
