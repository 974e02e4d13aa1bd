/** Runs one `agent` call: picks the sub-agent's tools, starts a `keel` child in sub-agent mode, relays its work. */
import path from 'node:path';
import { canonicalToolName, toolGiven, type Kernel, type ToolContext, type ToolResult } from '../../kernel/index.js';
import type { AgentDefinition, BrokenAgent } from './agents.js';
import { killGroup, runChild } from './child.js';
import { keelCli, launchFlags } from './cli-path.js';
import type { AgentInput } from './index.js';

/** Told when a sub-agent's process group starts (`alive`) and ends. */
export type ProcessTracker = (pid: number, alive: boolean) => void;

/** Keeps the process groups of running sub-agents, to kill them when this process exits. */
export function processTracker(): ProcessTracker {
  const live = new Set<number>();
  let exitHook = false;
  return (pid, alive) => {
    if (alive) live.add(pid);
    else live.delete(pid);
    if (!exitHook) {
      exitHook = true;
      // A parent that leaves in a hurry (a second Ctrl+C) still takes its sub-agents with it.
      process.on('exit', () => {
        for (const group of live) killGroup(group, 'SIGKILL');
      });
    }
  };
}

export interface RunSpec {
  depth: number;
  maxDepth: number;
  agents: AgentDefinition[];
  broken: BrokenAgent[];
  track(pid: number, alive: boolean): void;
}

const fail = (content: string): ToolResult => ({ content, isError: true });

export async function runSubagent(kernel: Kernel, ctx: ToolContext, args: AgentInput, spec: RunSpec): Promise<ToolResult> {
  const { session } = ctx;
  if (spec.depth + 1 > spec.maxDepth) {
    return fail(`agent: sub-agents may nest ${spec.maxDepth} deep (config subagents.maxDepth) and this agent is already at depth ${spec.depth}; do the task yourself.`);
  }
  let def: AgentDefinition | undefined;
  if (args.subagent_type) {
    def = spec.agents.find((a) => a.name === args.subagent_type);
    const broken = spec.broken.find((b) => b.name === args.subagent_type);
    if (!def && broken) return fail(`agent: subagent_type "${args.subagent_type}" cannot be used: ${broken.error}`);
    if (!def) {
      const known = spec.agents.map((a) => a.name);
      return fail(`agent: unknown subagent_type "${args.subagent_type}" (${known.length ? `known: ${known.join(', ')}` : 'no custom agents are defined'})`);
    }
  }
  const mine = kernel.tools.names().filter((name) => toolGiven(kernel, name));
  let tools: string[];
  if (args.tools) {
    const wanted = args.tools.map(canonicalToolName);
    const missing = wanted.filter((name) => !mine.includes(name));
    if (missing.length) return fail(`agent: tools: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not among this agent's tools (${mine.join(', ')})`);
    tools = wanted;
  } else if (def?.tools) {
    tools = def.tools.filter((name) => mine.includes(name));
  } else {
    tools = mine;
  }
  // The deepest sub-agents are not offered the agent tool at all.
  if (spec.depth + 2 > spec.maxDepth) tools = tools.filter((name) => name !== 'agent');
  const name = def?.name ?? 'general';
  const model = def?.model && def.model !== 'inherit' ? def.model : session.model;

  const cliArgs = [...launchFlags(), keelCli(), `--tools=${tools.join(',')}`, '--permission-mode', session.permissionMode, '--model', model, '--small-model', session.smallModel];
  if (typeof kernel.config.preset === 'string') cliArgs.push('--preset', kernel.config.preset);
  if (kernel.config.trusted) cliArgs.push('--trust');
  if (def) cliArgs.push('--system-prompt', def.prompt);
  // The child reads the same config files; rules and roots given to this process directly (flags, an SDK
  // host's options) are handed down too, so a sub-agent is never less confined than its parent.
  const rules = kernel.config.permissions;
  for (const rule of rules.deny) cliArgs.push(`--disallowedTools=${rule}`);
  for (const rule of rules.allow) cliArgs.push(`--allowedTools=${rule}`);
  for (const dir of (kernel.config.additionalDirectories as string[] | undefined) ?? []) cliArgs.push(`--add-dir=${path.resolve(kernel.config.cwd, dir)}`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KEEL_SUBAGENT_MODE: '1',
    KEEL_AGENT_DEPTH: String(spec.depth + 1),
    KEEL_PARENT_SESSION_ID: session.id,
    // tool-bash's process tag: the child and all it starts end with this Keel, also after a SIGKILL of it.
    ...(kernel.services.get('processes') as { env(name?: string): Record<string, string> } | undefined)?.env(`agent/${session.id}`),
  };
  delete env.KEEL_SDK_MODE;
  // An in-process host may have given the key and endpoint as options rather than in the environment.
  if (kernel.config.apiKey) env.ANTHROPIC_API_KEY = kernel.config.apiKey;
  if (kernel.config.baseURL) env.ANTHROPIC_BASE_URL = kernel.config.baseURL;
  if (kernel.config.keelHome) env.KEEL_HOME = kernel.config.keelHome;

  const task = args.context ? `${args.task}\n\n<context>\n${args.context}\n</context>` : args.task;
  const outcome = await runChild({
    command: process.execPath,
    args: cliArgs,
    env,
    cwd: session.cwd,
    task,
    signal: ctx.signal,
    track: spec.track,
    relay: (message) => ctx.emit({ type: 'subagent', toolUseId: ctx.call.id, agent: name, message }),
    ask: async (request) => {
      const reason = `sub-agent "${name}" asks${request.reason ? `: ${request.reason}` : ''}`;
      return kernel.hooks.askUser.promise(
        {
          kind: 'permission',
          call: { id: request.toolUseId, name: request.toolName, input: request.input },
          tool: kernel.tools.get(request.toolName),
          reason,
          options: ['allow_once', 'deny'],
          subagent: { name, toolUseId: ctx.call.id },
        },
        ctx.turn,
      );
    },
  });
  const display = { agent: name, sessionId: outcome.sessionId, tools, exitCode: outcome.code };
  const result = outcome.result;
  const spent = result?.usage ? { usage: result.usage, costUsd: result.total_cost_usd ?? 0 } : undefined;
  if (outcome.aborted && (!result || result.is_error)) return { content: 'Interrupted by the user.', isError: true, display, spent };
  if (!result) {
    const why = outcome.stderr.trim().split('\n').slice(-3).join(' | ') || `exit code ${outcome.code ?? outcome.signal}`;
    return { content: `Sub-agent "${name}" ended without a result: ${why}`, isError: true, display };
  }
  if (result.is_error) {
    return { content: `Sub-agent "${name}" failed (${result.subtype}): ${result.error ?? result.result}`, isError: true, display, spent };
  }
  return { content: result.result || `(sub-agent "${name}" finished without a final message)`, display: { ...display, numTurns: result.num_turns }, spent };
}
