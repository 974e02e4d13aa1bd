/**
 * Custom agents: Markdown files with front matter `name`, `description`, `tools`, `model`, whose body is the
 * agent's system prompt. The user's `$KEEL_HOME/agents/`, and in a trusted project Keel's `.keel/agents/` and
 * Claude Code's `.claude/agents/` (same format; its tool names are aliases of Keel's).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { canonicalToolName, errorMessage, type Services } from '../../kernel/index.js';

/** Reads an agent file: the `project-files` service (plugin `instructions`), which judges a project's file. */
export type FileReader = Pick<Services['project-files'], 'read'>;

export interface AgentDefinition {
  name: string;
  description: string;
  /** Keel tool names; undefined = the parent's tools. */
  tools?: string[];
  /** undefined or `inherit` = the parent's model. */
  model?: string;
  prompt: string;
  /** The file it came from, or `initialize` for an SDK host's. */
  source: string;
}

/** A file that could not be read as an agent: named when someone asks for it. */
export interface BrokenAgent {
  name: string;
  source: string;
  error: string;
}

const FENCE = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Where agent files are looked for: the user's folder, and the project's two (Keel's, then Claude Code's). */
export interface AgentDirs {
  user: string[];
  project: string[];
}

/**
 * The folders searched. The user's own agents come first and keep their names: a project file of the same name
 * is skipped with a warning, so a repository cannot swap in its own prompt and tools for an agent the user
 * relies on. An untrusted project's folders are not searched at all.
 */
export function agentDirs(projectRoot: string, keelHome: string, trusted: boolean): AgentDirs {
  return {
    user: keelHome ? [path.join(keelHome, 'agents')] : [],
    project: trusted ? [path.join(projectRoot, '.keel', 'agents'), path.join(projectRoot, '.claude', 'agents')] : [],
  };
}

/** A project agent skipped because a user-level agent has its name. */
export interface ShadowedAgent {
  name: string;
  source: string;
  /** The user's file that keeps the name. */
  kept: string;
}

export function toolList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const names = Array.isArray(value) ? value.map(String) : String(value).split(/[,\s]+/);
  return names.map((n) => n.trim()).filter(Boolean).map(canonicalToolName);
}

/** `projectRoot`: the project the project folders belong to, by which their files are judged. */
export async function loadAgents(dirs: AgentDirs, files: FileReader, projectRoot: string): Promise<{ agents: AgentDefinition[]; broken: BrokenAgent[]; shadowed: ShadowedAgent[] }> {
  const user = await loadFrom(dirs.user, (file) => files.read(file));
  const project = await loadFrom(dirs.project, (file) => files.read(file, { project: projectRoot }));
  const userNames = new Map<string, string>();
  for (const agent of user.agents) userNames.set(agent.name, agent.source);
  for (const broken of user.broken) userNames.set(broken.name, broken.source);
  const shadowed: ShadowedAgent[] = [];
  const keep = <T extends { name: string; source: string }>(item: T): boolean => {
    const kept = userNames.get(item.name);
    if (kept === undefined) return true;
    shadowed.push({ name: item.name, source: item.source, kept });
    return false;
  };
  return {
    agents: [...user.agents, ...project.agents.filter(keep)],
    broken: [...user.broken, ...project.broken.filter(keep)],
    shadowed,
  };
}

/** Agents of some folders, first file of a name wins. */
async function loadFrom(dirs: string[], read: (file: string) => Promise<string>): Promise<{ agents: AgentDefinition[]; broken: BrokenAgent[] }> {
  const agents: AgentDefinition[] = [];
  const broken: BrokenAgent[] = [];
  const seen = new Set<string>();
  for (const dir of dirs) {
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.md')).sort();
    } catch {
      continue;
    }
    for (const file of files) {
      const source = path.join(dir, file);
      const fallback = path.basename(file, '.md');
      let text: string;
      try {
        text = await read(source);
      } catch (err) {
        if (!seen.has(fallback)) broken.push({ name: fallback, source, error: `${source}: ${errorMessage(err)}` });
        continue;
      }
      try {
        const agent = await parseAgent(text, source, fallback);
        if (seen.has(agent.name)) continue;
        seen.add(agent.name);
        agents.push(agent);
      } catch (err) {
        if (!seen.has(fallback)) broken.push({ name: fallback, source, error: errorMessage(err) });
      }
    }
  }
  return { agents, broken };
}

async function parseAgent(text: string, source: string, fallback: string): Promise<AgentDefinition> {
  const match = FENCE.exec(text);
  if (!match) throw new Error(`${source}: no front matter (--- name / description / tools / model ---)`);
  const mod = await import('yaml');
  // yaml ships CommonJS for Node: bundled, its functions sit on the default export.
  const parse = typeof mod.parse === 'function' ? mod.parse : mod.default.parse;
  let data: unknown;
  try {
    data = parse(match[1] ?? '');
  } catch (err) {
    throw new Error(`${source}: front matter is not valid YAML: ${errorMessage(err).split('\n')[0]}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error(`${source}: front matter must be a mapping (name, description, tools, model)`);
  const fields = data as Record<string, unknown>;
  const name = fields.name === undefined ? fallback : fields.name;
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`${source}: name must be letters, digits, - or _`);
  if (typeof fields.description !== 'string' || !fields.description.trim()) throw new Error(`${source}: description is required (a string)`);
  if (fields.model !== undefined && typeof fields.model !== 'string') throw new Error(`${source}: model must be a string`);
  if (fields.tools !== undefined && typeof fields.tools !== 'string' && !Array.isArray(fields.tools)) throw new Error(`${source}: tools must be a list or a comma-separated string`);
  const prompt = text.slice(match[0].length).trim();
  if (!prompt) throw new Error(`${source}: the body (the agent's system prompt) is empty`);
  return { name, description: fields.description.trim(), tools: toolList(fields.tools), model: fields.model as string | undefined, prompt, source };
}
