/**
 * One sub-agent process: `keel` with KEEL_SUBAGENT_MODE=1 in its own process group, the task as a stream-json
 * user message on stdin, its stream-json output read line by line. Its permission questions are answered by
 * `ask`; everything else it prints is handed to `relay`. Aborting kills the whole group.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Answer, TokenUsage } from '../../kernel/index.js';

export interface ChildSpec {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  task: string;
  /** The policy handed over, written to the child's descriptor 3 and closed. */
  handoff: string;
  signal: AbortSignal;
  ask(request: { toolName: string; input: unknown; toolUseId: string; reason?: string }): Promise<Answer | undefined>;
  relay(message: Record<string, unknown>): void;
  /** Called with the pid when the process starts and again when it is gone, for the owner's exit cleanup. */
  track(pid: number, alive: boolean): void;
}

export interface ChildResult {
  result?: {
    subtype: string;
    is_error: boolean;
    result: string;
    error?: string;
    usage?: TokenUsage;
    total_cost_usd?: number;
    num_turns?: number;
    /** Turns the child's own sub-agents used under its limit. */
    subagent_turns?: number;
    session_id?: string;
  };
  sessionId?: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  aborted: boolean;
}

/** How long a sub-agent group gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2000;

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

export function runChild(spec: ChildSpec): Promise<ChildResult> {
  return new Promise((resolve) => {
    const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true });
    const policy = child.stdio[3] as NodeJS.WritableStream | null;
    if (policy) {
      policy.on('error', () => undefined); // a child that dies at once reports on stderr
      policy.end(spec.handoff);
    }
    const outcome: ChildResult = { code: null, signal: null, stderr: '', aborted: false };
    let killTimer: NodeJS.Timeout | undefined;
    const pid = child.pid;
    if (pid) spec.track(pid, true);

    const write = (value: unknown) => {
      if (child.stdin.writable) child.stdin.write(`${JSON.stringify(value)}\n`);
    };
    const onAbort = () => {
      outcome.aborted = true;
      if (!pid) return;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    if (spec.signal.aborted) onAbort();
    else spec.signal.addEventListener('abort', onAbort, { once: true });

    child.stdin.on('error', () => undefined); // the child may exit before reading everything
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      outcome.stderr = (outcome.stderr + chunk).slice(-4000);
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (!line.trim()) return;
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        outcome.stderr = `${outcome.stderr}\n(stdout) ${line}`.slice(-4000);
        return;
      }
      if (message.type === 'control_request') return void answer(message);
      // Lines of the sub-agent's own sub-agents carry a parent_tool_use_id: only its own result ends the task.
      const own = !message.parent_tool_use_id;
      if (message.type === 'result' && own) {
        outcome.result = message as ChildResult['result'];
        // The task is done: closing stdin lets the sub-agent exit.
        child.stdin.end();
      }
      if (own && message.type === 'system' && message.subtype === 'init' && typeof message.session_id === 'string') outcome.sessionId = message.session_id;
      spec.relay(message);
    });

    const answer = async (message: Record<string, unknown>) => {
      const id = String(message.request_id);
      const request = (message.request ?? {}) as Record<string, unknown>;
      if (request.subtype !== 'can_use_tool') {
        write({ type: 'control_response', response: { subtype: 'error', request_id: id, error: `unsupported control request "${String(request.subtype)}"` } });
        return;
      }
      let reply: Answer | undefined;
      try {
        reply = await spec.ask({
          toolName: String(request.tool_name),
          input: request.input,
          toolUseId: String(request.tool_use_id),
          reason: typeof request.decision_reason === 'string' ? request.decision_reason : undefined,
        });
      } catch {
        reply = undefined;
      }
      const allowed = reply?.kind === 'permission' && (reply.choice === 'allow_once' || reply.choice === 'allow_session');
      const body = allowed
        ? { behavior: 'allow', updatedInput: reply?.kind === 'permission' && reply.updatedInput !== undefined ? reply.updatedInput : request.input }
        : { behavior: 'deny', message: reply?.kind === 'permission' && reply.message ? reply.message : reply ? 'the user said no' : 'the parent agent cannot ask the user' };
      write({ type: 'control_response', response: { subtype: 'success', request_id: id, response: body } });
    };

    child.on('error', (err) => {
      outcome.stderr += `\n${err.message}`;
    });
    child.on('close', (code, signal) => {
      if (killTimer) clearTimeout(killTimer);
      spec.signal.removeEventListener('abort', onAbort);
      // Whatever the sub-agent left behind in its group goes with it.
      if (pid) {
        killGroup(pid, 'SIGKILL');
        spec.track(pid, false);
      }
      outcome.code = code;
      outcome.signal = signal;
      resolve(outcome);
    });
    write({ type: 'user', message: { role: 'user', content: spec.task }, parent_tool_use_id: null });
  });
}
