/**
 * Agent Skills (`SKILL.md` folders, as Claude Code, Codex and others read them). Only each skill's name and
 * description go into the request (a system-prompt section); the model loads a skill's body with the `skill`
 * tool (Claude Code's `Skill` is an alias), the user with `/<name> [arguments]`; `/skills` lists them.
 */
import os from 'node:os';
import path from 'node:path';
import { realpathSync } from 'node:fs';
import { definePlugin, defineTool, runAgent, Stage, z, type CommandDefinition, type Kernel, type Session } from '../../kernel/index.js';
import { grantAllowedTools, skillText } from './activate.js';
import { loadCatalog, type Catalog, type Skill } from './catalog.js';
import { skillsSection } from './listing.js';
import { readMarkdown, type FrontMatterOptions, type Parsed } from './front-matter.js';

const NAME = 'skills';

export type { SkillSource } from './discover.js';
export type { FrontMatterOptions, Parsed } from './front-matter.js';

/** Claude Code's Markdown files with YAML front matter, read as SKILL.md is; custom commands read theirs through it. */
export interface FrontMatterService {
  /**
   * The file read, its front matter checked with `schema`, and its body; or one line naming the file (and the field)
   * at fault. Read with the `project-files` service: only a regular file of at most 1 MiB; with `opts.project` (the
   * file is that project's) it must also resolve to no read-protected path and, in an untrusted folder, inside the
   * project.
   */
  read<T>(file: string, schema: z.ZodType<T>, opts?: FrontMatterOptions): Promise<Parsed<T>>;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** Markdown files with YAML front matter, checked with zod (plugin `skills`). */
    'front-matter': FrontMatterService;
  }
}

interface SessionSkills {
  catalog: Catalog;
  section?: string;
  /** Skills whose `allowed-tools` are already in the session's rules. */
  granted: Set<string>;
  /** Skills whose `/<name>` another command already has (they are still used through the `skill` tool). */
  shadowed: string[];
}

/** What the skills plugin needs from the `session-permissions` service, when the preset has it. */
interface ReadableDirs {
  addReadable(session: Session, dir: string): void;
}

const EMPTY: SessionSkills = { catalog: { skills: [], clashes: [], errors: [] }, granted: new Set(), shadowed: [] };

function skillsOf(session: Session): SessionSkills {
  return (session.data.get(NAME) as SessionSkills | undefined) ?? EMPTY;
}

const input = z.object({
  name: z.string().min(1).describe('The skill\'s name, as listed under "# Skills"'),
  arguments: z.string().optional().describe('Optional arguments for the skill'),
});

function real(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

/** A folder made readable must not be the home folder, the root or one above them (a symlinked skill folder). */
function safeToOpen(dir: string): boolean {
  const home = real(os.homedir());
  const rel = path.relative(dir, home);
  return dir !== path.parse(dir).root && !(rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel)));
}

function useSkill(kernel: Kernel, session: Session, name: string, args: string): { text: string; isError?: boolean } {
  const state = skillsOf(session);
  const skill = state.catalog.skills.find((s) => s.name === name);
  if (!skill) {
    const names = state.catalog.skills.map((s) => s.name).join(', ');
    return { text: `No skill named "${name}". Skills: ${names || '(none)'}`, isError: true };
  }
  const note = grantAllowedTools(kernel, session, skill, state.granted);
  return { text: note ? `${skillText(skill, args)}\n${note}` : skillText(skill, args) };
}

function describeCatalog({ catalog, shadowed }: SessionSkills): string {
  const lines: string[] = [];
  if (catalog.skills.length === 0) lines.push('No skills (put a folder with a SKILL.md in .claude/skills/, .agents/skills/, .keel/skills/, ~/.claude/skills/ or $KEEL_HOME/skills/).');
  else lines.push('Skills (/<name> [arguments] uses one):');
  const width = Math.max(0, ...catalog.skills.map((s) => s.name.length)) + 2;
  for (const skill of catalog.skills) {
    const tools = skill.allowedTools.length ? ` [allowed-tools: ${skill.allowedTools.join(', ')}${skill.honoured ? '' : ' — ignored: untrusted project'}]` : '';
    lines.push(`  ${skill.name.padEnd(width)}${skill.description} (${skill.where})${tools}`);
  }
  if (shadowed.length) lines.push(`Not offered as /<name> (another command has the name; the model can still use them): ${shadowed.join(', ')}`);
  if (catalog.clashes.length) lines.push('Name clashes (the first one found is used):', ...catalog.clashes.map((c) => `  ${c}`));
  if (catalog.errors.length) lines.push('Not loaded:', ...catalog.errors.map((e) => `  ${e}`));
  return lines.join('\n');
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  // SKILL.md (and, through `front-matter`, custom commands) are read as AGENTS.md is: the `project-files` service.
  dependencies: ['instructions'],
  apply(kernel) {
    // A skill's allowed-tools become allow rules: writing one is writing settings. `.claude/` and `.keel/` are
    // protected by the kernel already; `.agents/` holds only skills.
    kernel.protected.add({ segment: /^\.agents$/, why: 'in .agents/ (skills: their allowed-tools become allow rules)' });
    /** The per-skill `/<name>` commands this plugin attached for the current session. */
    const attached = new Set<string>();

    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      const catalog = await loadCatalog(kernel, session);
      const state: SessionSkills = { catalog, section: skillsSection(catalog.skills), granted: new Set(), shadowed: [] };
      session.data.set(NAME, state);
      for (const error of catalog.errors) kernel.log('warn', `skill not loaded: ${error}`, NAME);
      const ignored = catalog.skills.filter((s) => !s.honoured && s.allowedTools.length);
      if (ignored.length) {
        kernel.log('warn', `this project is not trusted: its skills load as plain instructions and their allowed-tools are ignored (${ignored.map((s) => s.name).join(', ')})`, NAME);
      }
      const readable = kernel.services.get('session-permissions') as Partial<ReadableDirs> | undefined;
      // The user's and plugins' skill folders may lie outside the project: their files become readable. A
      // project's are inside it already, and a project's symlink to a folder elsewhere opens nothing.
      for (const skill of catalog.skills) {
        const dir = real(skill.dir);
        if (skill.origin !== 'project' && typeof readable?.addReadable === 'function' && safeToOpen(dir)) readable.addReadable(session, dir);
      }
      for (const name of attached) kernel.commands.detach(name);
      attached.clear();
      for (const skill of catalog.skills) {
        if (kernel.commands.has(skill.name)) {
          state.shadowed.push(skill.name);
          continue;
        }
        kernel.commands.attach(skillCommand(skill), NAME);
        attached.add(skill.name);
      }
    });

    // Early and unchanging for the session: the list sits in the cached prefix of the system prompt.
    kernel.hooks.contextLoad.tapPromise({ name: NAME, stage: Stage.EARLY }, async (context, turn) => {
      const section = skillsOf(turn.session).section;
      return section ? { ...context, system: [...context.system, { type: 'text', text: section }] } : context;
    });

    // `skill` is sent only when the session has skills (Claude Code's `Skill` is its alias: kernel/tool-names.ts).
    kernel.hooks.selectTools.tapPromise(NAME, async (tools, turn) =>
      tools.filter((tool) => tool.name !== 'skill' || skillsOf(turn.session).catalog.skills.length > 0),
    );

    kernel.tools.register(
      defineTool({
        name: 'skill',
        description:
          'Use a skill listed under "# Skills" in the system prompt: returns its instructions and its folder, whose files you read with read_file when the instructions mention them. Call it before starting a task that matches a skill.',
        permission: 'read',
        input,
        async execute(args, ctx) {
          const used = useSkill(kernel, ctx.session, args.name, args.arguments ?? '');
          return used.isError ? { content: used.text, isError: true } : { content: used.text };
        },
      }),
    );

    kernel.services.provide('front-matter', { read: (file, schema, opts = {}) => readMarkdown(file, schema, opts, kernel.services.require('project-files', NAME)) });

    kernel.commands.register({
      name: 'skills',
      description: 'list the skills (name, description, where from), name clashes and skills that did not load',
      run: async (_args, ctx) => describeCatalog(skillsOf(ctx.session)),
    });

    kernel.services.provide(`doctor:${NAME}`, {
      async checks() {
        const { cwd, projectRoot } = kernel.config;
        const catalog = await loadCatalog(kernel, { cwd, projectRoot: projectRoot ?? cwd });
        return [
          { name: 'skills', ok: catalog.errors.length === 0, detail: catalog.errors.length ? catalog.errors.join('; ') : `${catalog.skills.length} skill${catalog.skills.length === 1 ? '' : 's'} found` },
          ...(catalog.clashes.length ? [{ name: 'skill names', ok: false, detail: `clashes (the first one found is used): ${catalog.clashes.join('; ')}` }] : []),
        ];
      },
    });

    function skillCommand(skill: Skill): CommandDefinition {
      return {
        name: skill.name,
        description: `${skill.description} (skill, ${skill.where})`,
        run: async (args, ctx) => {
          const used = useSkill(kernel, ctx.session, skill.name, args);
          const run = await runAgent(kernel, ctx.session, used.text, { signal: ctx.signal });
          if (run.isError) throw new Error(run.error ?? run.subtype);
          return run.result;
        },
      };
    }
  },
}));
