/**
 * The `agent` tool: delegates a task to a sub-agent — a fresh `keel` process in sub-agent mode with its own
 * context, only the tools it is given (never more than this agent has), this session's permission mode and
 * its own session file linked to this one. Its final answer is the tool's result; its usage adds to ours.
 */
import path from 'node:path';
import { z } from 'zod';
import {
  canonicalToolName,
  definePlugin,
  defineTool,
  toolGiven,
  type Kernel,
  type Session,
  type ToolContext,
  type ToolResult,
} from '../../kernel/index.js';
import { agentDirs, loadAgents, toolList, type AgentDefinition, type BrokenAgent } from './agents.js';
import { killGroup, runChild } from './child.js';
import { keelCli, launchFlags } from './cli-path.js';

const NAME = 'tool-agent';

export interface SubagentsConfig {
  /** How deep sub-agents may nest: 1 = sub-agents cannot start their own (default 2). */
  maxDepth?: number;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    subagents?: SubagentsConfig;
  }
}

const configSchema = z.object({ maxDepth: z.number().int().min(0).optional() }).strict();

interface SessionAgents {
  files: AgentDefinition[];
  broken: BrokenAgent[];
  /** Defined by an SDK host's `initialize`; they win over files of the same name. */
  host: AgentDefinition[];
}

const input = z.object({
  task: z.string().min(1).describe('What the sub-agent must do, with everything it needs to know: it sees none of this conversation.'),
  context: z.string().optional().describe('Background to hand over: findings so far, file paths, constraints.'),
  tools: z.array(z.string()).optional().describe('The only tools the sub-agent may use (default: all of yours).'),
  subagent_type: z.string().optional().describe('A custom agent to run, by name (see the list in the description).'),
});

const BASE_DESCRIPTION = `Delegates a self-contained task to a sub-agent: a separate agent with a fresh context that works with its own tools and returns its final answer as this tool's result. Use it for independent searches or pieces of work that would otherwise fill this context; give it the full task, since it sees nothing of this conversation. Several agent calls in one response run in parallel.`;

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { subagents: configSchema },
  apply(kernel) {
    const depth = Number(process.env.KEEL_AGENT_DEPTH) || 0;
    const maxDepth = (kernel.config.subagents as SubagentsConfig | undefined)?.maxDepth ?? 2;
    // The list the description shows: the agents of the session that started last.
    let listed: AgentDefinition[] = [];
    const live = new Set<number>();
    let exitHook = false;
    const track = (pid: number, alive: boolean) => {
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

    const stateOf = (session: Session): SessionAgents => {
      let state = session.data.get(NAME) as SessionAgents | undefined;
      if (!state) {
        state = { files: [], broken: [], host: [] };
        session.data.set(NAME, state);
      }
      return state;
    };
    const agentsOf = (session: Session): AgentDefinition[] => {
      const state = stateOf(session);
      const hostNames = new Set(state.host.map((a) => a.name));
      return [...state.host, ...state.files.filter((a) => !hostNames.has(a.name))];
    };

    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      const found = await loadAgents(agentDirs(session.projectRoot, kernel.config.keelHome));
      const state = stateOf(session);
      state.files = found.agents;
      state.broken = found.broken;
      for (const broken of found.broken) kernel.log('warn', `agent file skipped: ${broken.error}`, NAME);
      listed = agentsOf(session);
    });

    kernel.services.provide('agents', {
      define(session: Session, defs: Record<string, { description: string; prompt: string; tools?: string[]; model?: string }>) {
        stateOf(session).host = Object.entries(defs).map(([name, def]) => ({
          name,
          description: def.description,
          prompt: def.prompt,
          tools: toolList(def.tools),
          model: def.model,
          source: 'initialize',
        }));
        listed = agentsOf(session);
      },
      names: (session: Session) => agentsOf(session).map((a) => a.name),
    });

    kernel.tools.register(
      defineTool({
        name: 'agent',
        get description() {
          if (listed.length === 0) return BASE_DESCRIPTION;
          const lines = listed.map((a) => `- ${a.name}: ${a.description}${a.tools ? ` (tools: ${a.tools.join(', ')})` : ''}`);
          return `${BASE_DESCRIPTION}\n\nCustom agents (pass the name as subagent_type):\n${lines.join('\n')}`;
        },
        permission: 'execute',
        concurrent: true,
        input,
        execute: (args, ctx) => runSubagent(kernel, ctx, args, { depth, maxDepth, agents: agentsOf(ctx.session), broken: stateOf(ctx.session).broken, track }),
      }),
    );
  },
}));

interface RunSpec {
  depth: number;
  maxDepth: number;
  agents: AgentDefinition[];
  broken: BrokenAgent[];
  track(pid: number, alive: boolean): void;
}

const fail = (content: string): ToolResult => ({ content, isError: true });

async function runSubagent(kernel: Kernel, ctx: ToolContext, args: z.infer<typeof input>, spec: RunSpec): Promise<ToolResult> {
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
