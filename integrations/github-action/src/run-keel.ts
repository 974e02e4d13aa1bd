/** Runs Keel headless (`-p --output-format stream-json`, the prompt on stdin) and reads its lines as they come. */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface KeelInvocation {
  command: string;
  args: string[];
  prompt: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** Claude Code's result message, as Keel writes it (the fields the action reads). */
export interface ResultMessage {
  type: 'result';
  subtype: string;
  is_error: boolean;
  result?: string;
  session_id: string;
  total_cost_usd: number;
  num_turns: number;
  errors?: string[];
  structured_output?: unknown;
}

export interface KeelOutcome {
  result?: ResultMessage;
  exitCode: number | null;
  /** The last lines Keel wrote on stderr (its one-line reason when it fails). */
  stderr: string;
  /** Each tool call, in order, as `name: short input`, for the progress comment and the job summary. */
  steps: string[];
}

export function describeCall(name: string, input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>;
  const detail = fields.command ?? fields.path ?? fields.file_path ?? fields.pattern ?? fields.url ?? fields.task ?? fields.query;
  const text = typeof detail === 'string' ? detail.replace(/\s+/g, ' ') : '';
  return text ? `${name}: ${text.length > 80 ? `${text.slice(0, 77)}…` : text}` : name;
}

export async function runKeel(run: KeelInvocation, onStep: (steps: string[]) => void): Promise<KeelOutcome> {
  const child = spawn(run.command, [...run.args, '-p', '--output-format', 'stream-json'], { cwd: run.cwd, env: run.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const steps: string[] = [];
  let result: ResultMessage | undefined;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8000);
  });
  child.stdin.on('error', () => undefined); // Keel may exit before reading the prompt (a bad flag)
  child.stdin.end(run.prompt);
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    let message: Record<string, any>; // one stream-json line
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.type === 'result') result = message as ResultMessage;
    if (message.type === 'assistant' && !message.parent_tool_use_id) {
      const calls = (message.message?.content ?? []).filter((b: { type: string }) => b.type === 'tool_use');
      if (calls.length) {
        for (const call of calls) steps.push(describeCall(call.name, call.input));
        onStep(steps.slice());
      }
    }
  });
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { result, exitCode, stderr: stderr.trim(), steps };
}
