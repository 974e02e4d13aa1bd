/**
 * The `agent` tool: delegates a task to a sub-agent — a fresh `keel` process in sub-agent mode with its own
 * context, only the tools it is given (never more than this agent has), this session's permission mode and
 * its own session file linked to this one. Its final answer is the tool's result; its usage adds to ours.
 * Starting and running sub-agents (run.ts) is loaded on the first call.
 */
import { z } from 'zod';
import { definePlugin, defineTool, type Session } from '../../kernel/index.js';
import { agentDirs, loadAgents, toolList, type AgentDefinition, type BrokenAgent } from './agents.js';
import { HANDOFF_SOURCE, type PolicyHandoff } from './policy.js';
import type { ProcessTracker } from './run.js';
import { agentsCommand } from './command.js';

const NAME = 'tool-agent';

export interface SubagentsConfig {
  /** How deep sub-agents may nest: 1 = sub-agents cannot start their own (default 2). */
  maxDepth?: number;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    subagents?: SubagentsConfig;
    /** Custom agents by name, as Claude Code's `--agents` gives them. */
    agents?: Record<string, { description: string; prompt: string; tools?: string[]; model?: string }>;
  }
}

const configSchema = z.object({ maxDepth: z.number().int().min(0).optional() }).strict();
const agentDef = z.object({ description: z.string().min(1), prompt: z.string().min(1), tools: z.array(z.string()).optional(), model: z.string().optional() }).strict();
const agentsConfig = z.record(z.string().regex(/^[a-zA-Z0-9_-]+$/, 'an agent name is letters, digits, "-" and "_"'), agentDef);

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

/** The `agent` tool's input. */
export type AgentInput = z.infer<typeof input>;

const BASE_DESCRIPTION = `Delegates a self-contained task to a sub-agent: a separate agent with a fresh context that works with its own tools and returns its final answer as this tool's result. Use it for independent searches or pieces of work that would otherwise fill this context; give it the full task, since it sees nothing of this conversation. Several agent calls in one response run in parallel.`;

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  // Agent files are read as AGENTS.md is: the `project-files` service.
  dependencies: ['instructions'],
  // `subagentPolicy` is the handoff itself, checked by inherit.ts; it counts only when the handed layer set it.
  config: { subagents: configSchema, subagentPolicy: z.unknown(), agents: agentsConfig },
  async configLayers() {
    // A sub-agent takes its parent's policy before anything else is configured, above every layer of its own.
    if (process.env.KEEL_SUBAGENT_MODE !== '1') return [];
    const { handoffLayer, readHandoff } = await import('./inherit.js');
    return [handoffLayer(readHandoff(process.env))];
  },
  apply(kernel) {
    const depth = Number(process.env.KEEL_AGENT_DEPTH) || 0;
    const maxDepth = (kernel.config.subagents as SubagentsConfig | undefined)?.maxDepth ?? 2;
    // The list the description shows: the agents of the session that started last.
    let listed: AgentDefinition[] = [];
    // The sub-agents this process runs, made with the first.
    let track: ProcessTracker | undefined;

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

    const load = async (session: Session) => {
      const dirs = agentDirs(session.projectRoot, kernel.config.keelHome, kernel.config.trusted === true);
      const found = await loadAgents(dirs, kernel.services.require('project-files', NAME), session.projectRoot);
      const state = stateOf(session);
      state.files = found.agents;
      state.broken = found.broken;
      listed = agentsOf(session);
      return found;
    };
    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      const found = await load(session);
      for (const broken of found.broken) kernel.log('warn', `agent file skipped: ${broken.error}`, NAME);
      for (const clash of found.shadowed) {
        kernel.log('warn', `agent file skipped: ${clash.source} is named "${clash.name}" like your own agent ${clash.kept}, which keeps the name (rename the project's agent to use it)`, NAME);
      }
      // `--agents` (config `agents`): Claude Code's custom agents given on the command line, above the files.
      const given = kernel.config.agents;
      if (given && stateOf(session).host.length === 0) stateOf(session).host = Object.entries(given).map(([name, def]) => ({ name, description: def.description, prompt: def.prompt, tools: toolList(def.tools), model: def.model, source: '--agents' }));
      listed = agentsOf(session);
    });
    kernel.commands.register(
      agentsCommand(kernel, { agents: agentsOf, broken: (session) => stateOf(session).broken, reload: async (session) => void (await load(session)) }),
    );

    if (process.env.KEEL_SUBAGENT_MODE === '1') {
      const handed = kernel.config.sources.subagentPolicy === HANDOFF_SOURCE ? (kernel.config.subagentPolicy as PolicyHandoff) : undefined;
      // Asked by the sub-agent frontend before the task runs: what makes this process looser than its parent.
      kernel.services.provide('subagent-policy', {
        async check(): Promise<string | undefined> {
          if (!handed) return 'no policy was handed over by a parent agent';
          const { looserThanHanded } = await import('./inherit.js');
          return looserThanHanded(kernel, handed);
        },
      });
    }

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
        async execute(args, ctx) {
          const { processTracker, runSubagent } = await import('./cold.js');
          track ??= processTracker();
          return runSubagent(kernel, ctx, args, { depth, maxDepth, agents: agentsOf(ctx.session), broken: stateOf(ctx.session).broken, track });
        },
      }),
    );
  },
}));
