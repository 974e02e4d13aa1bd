/**
 * `/agents`: the custom agents this session can run (list, `show <name>`), and `create <name> [--user]
 * <what it does>`, which has the model write the agent's system prompt and saves the file in `.claude/agents/`
 * (or `$KEEL_HOME/agents/` with `--user`). An existing file is never overwritten.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { auxiliaryTurn, responseText, type CommandDefinition, type Kernel, type Session } from '../../kernel/index.js';
import type { AgentDefinition, BrokenAgent } from './agents.js';

export interface AgentsAccess {
  agents(session: Session): AgentDefinition[];
  broken(session: Session): BrokenAgent[];
  /** Reads the agent folders again (after a file was created). */
  reload(session: Session): Promise<void>;
}

const USAGE = '/agents [list] | /agents show <name> | /agents create <name> [--user] <what the agent does>';

const WRITER_PROMPT = `You write system prompts for coding sub-agents. Given an agent's name and what it should do, reply with the system prompt only: no front matter, no preamble, no code fence. Address the agent as "you"; say what it is for, how to go about the work step by step, what to avoid, and what its final answer must contain (it is handed back to another agent). Keep it under 40 lines.`;

function listing(agents: AgentDefinition[], broken: BrokenAgent[]): string {
  if (!agents.length && !broken.length) return `No custom agents. Add Markdown files to .claude/agents/, .keel/agents/ or $KEEL_HOME/agents/, or run ${USAGE.split(' | ')[2]}.`;
  const width = Math.max(0, ...agents.map((a) => a.name.length), ...broken.map((b) => b.name.length)) + 2;
  return [
    'Custom agents (the model runs them with the agent tool, subagent_type = name):',
    ...agents.map((a) => `  ${a.name.padEnd(width)}${a.description}${a.tools ? ` [tools: ${a.tools.join(', ')}]` : ''}${a.model && a.model !== 'inherit' ? ` [model: ${a.model}]` : ''}  (${a.source})`),
    ...broken.map((b) => `  ${b.name.padEnd(width)}not loaded: ${b.error}`),
  ].join('\n');
}

/** What /agents create uses of the file tools' `safe-files` service (plugin tools-fs). */
interface FileCreator {
  realTarget(abs: string): Promise<string>;
  create(real: string, bytes: Buffer, opts: { shown: string; mode: number }): Promise<void>;
}

/** The `safe-files` service, or a one-line error saying which plugin offers it. */
function fileCreator(kernel: Kernel): FileCreator {
  const files = kernel.services.get('safe-files') as Partial<FileCreator> | undefined;
  if (typeof files?.create === 'function' && typeof files.realTarget === 'function') return files as FileCreator;
  throw new Error("creating an agent file needs the file tools' safe-files service (plugin tools-fs), which this agent does not have");
}

function yamlString(text: string): string {
  return JSON.stringify(text);
}

export function agentsCommand(kernel: Kernel, access: AgentsAccess): CommandDefinition {
  return {
    name: 'agents',
    description: 'list the custom agents, show one (/agents show <name>), or create one (/agents create <name> [--user] <what it does>)',
    async run(args, { session, signal }) {
      const [verb = 'list', ...rest] = args.trim().split(/\s+/).filter(Boolean);
      if (verb === 'list') return listing(access.agents(session), access.broken(session));
      if (verb === 'show') {
        const name = rest[0];
        if (!name) throw new Error(`name the agent: ${USAGE}`);
        const agent = access.agents(session).find((a) => a.name === name);
        if (!agent) {
          const broken = access.broken(session).find((b) => b.name === name);
          if (broken) throw new Error(`${name} is not loaded: ${broken.error}`);
          throw new Error(`no agent named "${name}"; /agents lists them`);
        }
        return [`${agent.name} (${agent.source})`, `Description: ${agent.description}`, `Tools: ${agent.tools?.join(', ') ?? 'all of the parent’s'}`, `Model: ${agent.model ?? 'inherit'}`, '', agent.prompt].join('\n');
      }
      if (verb === 'create') {
        const user = rest.includes('--user');
        const words = rest.filter((w) => w !== '--user');
        const [name, ...what] = words;
        if (!name || !/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`the name must be letters, digits, - or _: ${USAGE}`);
        const description = what.join(' ').trim();
        if (!description) throw new Error(`say what the agent does: ${USAGE}`);
        if (user && !kernel.config.keelHome) throw new Error('--user: KEEL_HOME is not set');
        const dir = user ? path.join(kernel.config.keelHome, 'agents') : path.join(session.projectRoot, '.claude', 'agents');
        const file = path.join(dir, `${name}.md`);
        const exists = new Error(`${file} already exists; edit it, or pick another name`);
        // Checked before the model is asked, and again when the file is made (safe-files' create never replaces one).
        if (existsSync(file)) throw exists;
        const files = fileCreator(kernel);
        const query = kernel.services.get('query');
        if (!query) throw new Error('this preset has no query service to write the agent’s prompt with');
        const response = await query.ask(
          { tier: 'main', stream: false, system: [{ type: 'text', text: WRITER_PROMPT }], messages: [{ role: 'user', content: `Name: ${name}\nWhat it does: ${description}` }] },
          auxiliaryTurn(kernel, session, signal),
        );
        const prompt = responseText(response.content).trim();
        if (!prompt) throw new Error('the model wrote no prompt; nothing was saved');
        const text = `---\nname: ${name}\ndescription: ${yamlString(description)}\n---\n${prompt}\n`;
        await files.create(await files.realTarget(file), Buffer.from(text), { shown: file, mode: 0o644 }).catch((err: unknown) => {
          throw (err as { kind?: string }).kind === 'exists' ? exists : err;
        });
        await access.reload(session);
        return `Created ${file}. Edit it to set tools (e.g. tools: Read, Grep) or model; the model can run it now as subagent_type "${name}".`;
      }
      throw new Error(`unknown action "${verb}": ${USAGE}`);
    },
  };
}
