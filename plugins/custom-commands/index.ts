/**
 * Custom slash commands: Markdown files in `.claude/commands/`, `.keel/commands/`, `~/.claude/commands/` and
 * `$KEEL_HOME/commands/` (Claude Code's format). The body is the prompt (see expand.ts); `/help` and completion
 * list them with their argument hint; `keel -p "/name args"` sends the expanded prompt.
 */
import { definePlugin, runAgent, Stage, splitToolList, z, type CommandDefinition, type Kernel, type Services, type Session } from '../../kernel/index.js';
import { findCommandFiles, type CommandFile } from './discover.js';

const NAME = 'custom-commands';

const toolList = z.union([z.string(), z.array(z.string())]);

/** Claude Code's command front matter; other keys are allowed and ignored. */
/**
 * Escape sequences and control characters (newlines and tabs aside), C1 controls and bidirectional overrides: what
 * `/help` prints of a command must not set the title or clipboard or clear the screen.
 */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const CONTROL_ALL = new RegExp(CONTROL.source, 'g');
const shownText = z.string().refine((t) => !CONTROL.test(t), 'must not hold escape sequences or control characters');

export const commandFrontMatter = z.looseObject({
  description: shownText.optional(),
  'argument-hint': shownText.optional(),
  'allowed-tools': toolList.optional(),
  model: z.string().min(1).optional(),
  'disable-model-invocation': z.boolean().optional(),
});

export interface CustomCommand {
  name: string;
  file: string;
  where: string;
  description: string;
  hint?: string;
  allowedTools: string[];
  model?: string;
  body: string;
  /** `` !`command` `` may run and `allowed-tools` applies: the user installed it, or the project is trusted. */
  trusted: boolean;
}

/** What this plugin needs from the `session-permissions` service, when the preset has it. */
interface SessionPermissions {
  allow(session: Session, rules: string[], source: string): () => void;
}

export async function loadCommands(kernel: Kernel, projectRoot: string): Promise<{ commands: CustomCommand[]; errors: string[]; clashes: string[] }> {
  const trusted = kernel.config.trusted !== false;
  const { files, errors } = findCommandFiles({ projectRoot, keelHome: kernel.config.keelHome });
  const commands: CustomCommand[] = [];
  const clashes: string[] = [];
  const frontMatter = kernel.services.require('front-matter', NAME);
  // Untrusted, yours come first and keep their names: a cloned repository cannot swap its text in for a command
  // you rely on (as custom agents do). Trusted, the project's wins, as in Claude Code.
  const ordered = trusted ? files : [...files.filter((f) => f.origin === 'user'), ...files.filter((f) => f.origin !== 'user')];
  const loaded = await Promise.all(ordered.map((file) => parseCommand(frontMatter, file, trusted, projectRoot)));
  for (const result of loaded) {
    if (typeof result === 'string') errors.push(result);
    else {
      const first = commands.find((c) => c.name === result.name);
      if (first && !trusted && result.where === 'project' && first.where === 'user') errors.push(`${result.file}: this project is not trusted, so your ${first.file} keeps the name /${result.name}`);
      else if (first) clashes.push(`/${result.name}: ${result.file} is shadowed by ${first.file}`);
      else commands.push(result);
    }
  }
  return { commands, errors, clashes };
}

async function parseCommand(frontMatter: Services['front-matter'], found: CommandFile, trusted: boolean, projectRoot: string): Promise<CustomCommand | string> {
  // A project's command file is read only when it resolves to no secret and, untrusted, inside the project.
  const parsed = await frontMatter.read(found.file, commandFrontMatter, { verbatim: ['argument-hint'], ...(found.origin === 'project' ? { project: projectRoot } : {}) });
  if (!parsed.ok) return parsed.error;
  const data = parsed.data;
  const hint = data['argument-hint'];
  const allowed = data['allowed-tools'];
  // The body may hold anything; the line shown as its description is shown without its controls.
  const firstLine = parsed.body.split('\n').find((l) => l.trim())?.trim().replace(CONTROL_ALL, '') ?? '';
  return {
    name: found.name,
    file: found.file,
    where: found.where,
    description: data.description?.trim() || (firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine) || found.name,
    ...(hint ? { hint } : {}),
    allowedTools: allowed === undefined ? [] : splitToolList(Array.isArray(allowed) ? allowed : [allowed]),
    ...(data.model ? { model: data.model } : {}),
    body: parsed.body,
    trusted: found.origin === 'user' || trusted,
  };
}

function toDefinition(command: CustomCommand): CommandDefinition {
  return {
    name: command.name,
    // The hint rides in the description, so /help and completion show it in every frontend.
    description: `${command.hint ? `${command.hint} — ` : ''}${command.description} (${command.where})`,
    run: async (args, ctx) => {
      const { kernel, session, signal } = ctx;
      const permissions = kernel.services.get('session-permissions') as Partial<SessionPermissions> | undefined;
      // `allowed-tools` holds while the command runs, under every deny and ask rule; an untrusted project's is ignored.
      let revoke = () => {};
      if (command.allowedTools.length && command.trusted && typeof permissions?.allow === 'function') {
        revoke = permissions.allow(session, command.allowedTools, `${command.file}: field "allowed-tools"`);
      } else if (command.allowedTools.length && !command.trusted) {
        kernel.log('warn', `/${command.name}: ${command.file} is in a project that is not trusted, so its allowed-tools are ignored`, NAME);
      }
      const model = session.model;
      try {
        const { expandCommand } = await import('./cold.js');
        const prompt = await expandCommand(command.body, args, { kernel, session, signal, name: command.name, file: command.file, mayRun: command.trusted, ...(command.trusted ? {} : { confineTo: session.projectRoot }) });
        if (command.model) session.model = command.model;
        const run = await runAgent(kernel, session, prompt, { signal });
        if (run.isError) throw new Error(run.error ?? run.subtype);
        return run.result;
      } finally {
        session.model = model;
        revoke();
      }
    },
  };
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  // Its files are read as SKILL.md is, through the skills plugin's `front-matter` service; `@path` includes through
  // the instructions plugin's `project-files` service.
  dependencies: ['skills', 'instructions'],
  apply(kernel) {
    const attached = new Set<string>();
    const attach = (commands: CustomCommand[]) => {
      for (const command of commands) {
        // A built-in or plugin command of the same name keeps it; `keel doctor` names the clash.
        if (kernel.commands.has(command.name)) continue;
        kernel.commands.attach(toDefinition(command), NAME);
        attached.add(command.name);
      }
    };
    // Before the skills plugin attaches its `/<skill>` commands: your command files and a trusted project's keep their
    // names over a skill, so a project's skill (an untrusted one's above all) cannot take the `/commit` you rely on.
    kernel.hooks.sessionStart.tapPromise({ name: NAME, before: 'skills' }, async (session) => {
      const { commands, errors } = await loadCommands(kernel, session.projectRoot);
      for (const error of errors) kernel.log('warn', `command not loaded: ${error}`, NAME);
      for (const name of attached) kernel.commands.detach(name);
      attached.clear();
      attach(commands.filter((c) => c.trusted));
      session.data.set(NAME, commands.filter((c) => !c.trusted));
    });
    // An untrusted project's commands come after every skill has its `/<name>`: they never take one of your skills'.
    kernel.hooks.sessionStart.tapPromise({ name: NAME, stage: Stage.LATE }, async (session) => {
      const untrusted = (session.data.get(NAME) as CustomCommand[] | undefined) ?? [];
      session.data.delete(NAME);
      attach(untrusted);
    });

    kernel.services.provide(`doctor:${NAME}`, {
      async checks() {
        const root = kernel.config.projectRoot ?? kernel.config.cwd;
        const { commands, errors, clashes } = await loadCommands(kernel, root);
        const taken = commands.filter((c) => kernel.commands.has(c.name)).map((c) => `/${c.name} (${c.file}) is a built-in command's name`);
        return [
          { name: 'custom commands', ok: errors.length === 0, detail: errors.length ? errors.join('; ') : `${commands.length} found` },
          ...(clashes.length || taken.length ? [{ name: 'custom command names', ok: false, detail: [...clashes, ...taken].join('; ') }] : []),
        ];
      },
    });
  },
}));
