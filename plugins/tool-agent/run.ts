/** Runs one `agent` call: picks the sub-agent's tools, starts a `keel` child in sub-agent mode, relays its work. */
import path from 'node:path';
import { canonicalToolName, toolGiven, type Kernel, type ToolContext, type ToolResult } from '../../kernel/index.js';
import type { AgentDefinition, BrokenAgent } from './agents.js';
import { killGroup, runChild } from './child.js';
import { keelCli, launchFlags } from './cli-path.js';
import { buildHandoff } from './handoff.js';
import { HANDOFF_ENV, HANDOFF_FD } from './policy.js';
import { shareOfTurns } from './turns.js';
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

  // The child's turns come out of this run's: it never gets more than is left, and what it used counts here.
  const share = shareOfTurns(ctx, kernel.config.maxTurns);
  if (share.turns < 1) return fail(`agent: ${share.why}; finish the task yourself.`);
  const built = buildHandoff(kernel, session, {
    tools,
    permissionMode: session.permissionMode,
    maxTurns: share.turns,
  });
  if ('error' in built) {
    share.settle(0);
    return fail(`agent: cannot start a sub-agent under this agent's policy: ${built.error}. The agent tool is refused rather than running a sub-agent without it.`);
  }

  const cliArgs = [...launchFlags(), keelCli(), `--tools=${tools.join(',')}`, '--permission-mode', session.permissionMode, '--model', model, '--small-model', session.smallModel];
  // The child assembles the same plugins from the same places (checked by name against the handoff).
  const { config } = kernel;
  if (!config.sources.preset || !path.isAbsolute(config.sources.preset)) cliArgs.push('--preset', presetSpec(kernel));
  for (const file of projectConfigFiles(kernel)) cliArgs.push('--config', file);
  if (config.trusted) cliArgs.push('--trust');
  if (def) cliArgs.push('--system-prompt', def.prompt);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KEEL_SUBAGENT_MODE: '1',
    KEEL_AGENT_DEPTH: String(spec.depth + 1),
    KEEL_PARENT_SESSION_ID: session.id,
    [HANDOFF_ENV]: String(HANDOFF_FD),
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
    handoff: JSON.stringify(built.handoff),
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
  // Without a result nobody knows how many turns the child took: all it was given count.
  share.settle(result ? (result.num_turns ?? share.turns) + (result.subagent_turns ?? 0) : share.turns);
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

/** The config module `--config` named, or the project's that was loaded: the child loads it the same way. */
function projectConfigFiles(kernel: Kernel): string[] {
  const { configFiles = [], untrustedFiles = [], keelHome } = kernel.config;
  return configFiles.filter((file) => !untrustedFiles.includes(file) && !(path.dirname(file) === keelHome && path.basename(file).startsWith('agent.config.')));
}

/** The preset as the child can name it: the package a flag or variable named, else its (built-in) name. */
function presetSpec(kernel: Kernel): string {
  const { preset, packages = [] } = kernel.config;
  const name = typeof preset === 'string' ? preset : preset.name;
  return packages.find((p) => p.kind === 'preset' && p.key === 'preset' && p.provides === name)?.package ?? name;
}
