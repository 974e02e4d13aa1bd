import { readFile } from 'node:fs/promises';
import { definePlugin, errorMessage, Stage, type ConfigLayer, type Session } from '../../kernel/index.js';
import { discover, expand } from './files.js';
import { parseFrontMatter, toConfigValues } from './front-matter.js';

const NAME = 'instructions';

interface Loaded {
  /** The system prompt section, or undefined when there are no instruction files. */
  section?: string;
  files: string[];
}

/**
 * AGENTS.md / CLAUDE.md (project root and parents up to the repository root) and `$KEEL_HOME/AGENTS.md`:
 * read once when a session starts, with `@path` imports, into a stable system prompt section. Their YAML
 * front matter becomes config layers (project or user), validated like `agent.config.ts`.
 */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  async configLayers(ctx): Promise<ConfigLayer[]> {
    const layers: ConfigLayer[] = [];
    for (const { file, layer } of discover(ctx.cwd, ctx.projectRoot, ctx.keelHome)) {
      const { data } = await parseFrontMatter(await readFile(file, 'utf8'), file);
      if (data && Object.keys(data).length) layers.push({ kind: layer, source: file, values: toConfigValues(data, file) });
    }
    return layers;
  },
  apply(kernel) {
    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      session.data.set(NAME, await load(session, kernel.config.keelHome, (message) => kernel.log('warn', message, NAME)));
    });
    // Early and unchanging between turns, so it sits in the cached prefix of the system prompt.
    kernel.hooks.contextLoad.tapPromise({ name: NAME, stage: Stage.EARLY }, async (context, turn) => {
      const loaded = turn.session.data.get(NAME) as Loaded | undefined;
      if (!loaded?.section) return context;
      return { ...context, system: [...context.system, { type: 'text', text: loaded.section }] };
    });
  },
}));

async function load(session: Session, keelHome: string, warn: (message: string) => void): Promise<Loaded> {
  const parts: string[] = [];
  const files: string[] = [];
  for (const { file, layer } of discover(session.cwd, session.projectRoot, keelHome)) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      warn(`${file}: cannot be read: ${errorMessage(err)}`);
      continue;
    }
    // Front matter was validated at start-up by the CLI; here it is only stripped.
    const body = await parseFrontMatter(text, file).then((parsed) => parsed.body, () => text);
    const expanded = await expand(file, body, warn);
    files.push(...expanded.files);
    if (!expanded.text.trim()) continue;
    parts.push(`Contents of ${file} (${layer === 'user' ? "the user's instructions for all projects" : 'project instructions'}):\n\n${expanded.text}`);
  }
  if (!parts.length) return { files };
  const section = `# Instructions\nThese are the user's standing instructions. They take precedence over default behaviour: follow them exactly.\n\n${parts.join('\n\n')}`;
  return { section, files };
}
