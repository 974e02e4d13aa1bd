import os from 'node:os';
import path from 'node:path';
import { coreProtectedEntries, definePlugin, errorMessage, KeelError, frontMatterOf, ProtectedPaths, Stage, type ConfigLayer, type Kernel, type Session } from '../../kernel/index.js';
import { checkRead, discover, expand, realPath, ruleFor, type ReadGuard } from './files.js';
import { parseFrontMatter, toConfigValues } from './front-matter.js';
import { readFileSafely } from './safe-read.js';
import { projectFiles } from './service.js';

const NAME = 'instructions';

export { MAX_FILE_BYTES } from './safe-read.js';

export type { ProjectFileOptions, ProjectFilesService } from './service.js';

/** The files whose front matter this plugin loads as settings, wherever they are (any folder from cwd up). */
export const SETTINGS_FILE = /^(AGENTS|CLAUDE)\.md$/;

interface Loaded {
  /** The system prompt section, or undefined when there are no instruction files. */
  section?: string;
  files: string[];
}

function guardFor(root: string, trusted: boolean, surface: ProtectedPaths): ReadGuard {
  return { root: realPath(root), trusted, secret: (p) => surface.match(p, 'read')?.reason };
}

/**
 * AGENTS.md / CLAUDE.md (project root and parents up to the repository root) and `$KEEL_HOME/AGENTS.md`:
 * read once when a session starts, with `@path` imports, into a stable system prompt section. Their YAML
 * front matter becomes config layers (project or user), validated like `agent.config.ts`; in an untrusted
 * folder, project front matter is not even parsed.
 */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  async configLayers(ctx): Promise<ConfigLayer[]> {
    const layers: ConfigLayer[] = [];
    // Before the kernel exists: the kernel's own read-protected entries (credentials) are what matter here.
    const surface = new ProtectedPaths();
    for (const entry of coreProtectedEntries({ keelHome: ctx.keelHome ? realPath(ctx.keelHome) : '', home: realPath(os.homedir()) })) surface.add(entry);
    const guard = guardFor(ctx.projectRoot, ctx.trusted, surface);
    for (const { file, layer } of discover(ctx.cwd, ctx.projectRoot, ctx.keelHome)) {
      const checked = checkRead(file, layer, guard);
      if (checked.refused && layer === 'project') continue;
      let text: string;
      try {
        text = await readFileSafely(file, layer === 'user' ? {} : ruleFor(layer, guard));
      } catch (err) {
        // Untrusted, the front matter is never applied: the session's load names the file and skips it. Elsewhere it
        // may hold rules, so Keel does not start without them.
        if (layer === 'project' && !ctx.trusted) continue;
        throw new KeelError(`${file}: ${errorMessage(err)}`, { code: 'config', exitCode: 2 });
      }
      if (layer === 'project' && !ctx.trusted) {
        // Named for the CLI's warning; the YAML of an untrusted folder is never parsed.
        if (frontMatterOf(text) !== undefined) layers.push({ kind: 'project', source: file, values: {} });
        continue;
      }
      const { data } = await parseFrontMatter(text, file);
      if (data && Object.keys(data).length) layers.push({ kind: layer, source: file, values: toConfigValues(data, file) });
    }
    return layers;
  },
  apply(kernel) {
    kernel.services.provide('project-files', projectFiles(kernel));
    const why = 'an instructions file whose front matter holds Keel settings (permission mode, rules)';
    kernel.protected.add({ segment: SETTINGS_FILE, why, frontMatter: true });
    // An instructions file that is a symlink loads its target: that name must not be a way around the entry.
    const { cwd, projectRoot, keelHome } = kernel.config;
    for (const { file } of cwd && projectRoot ? discover(cwd, projectRoot, keelHome) : []) {
      const target = realPath(file);
      if (target !== realPath(path.dirname(file)) + path.sep + path.basename(file)) kernel.protected.add({ path: target, why: `the target of ${file} (${why})`, frontMatter: true });
    }
    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      session.data.set(NAME, await load(session, kernel, (message) => kernel.log('warn', message, NAME)));
    });
    // Early and unchanging between turns, so it sits in the cached prefix of the system prompt.
    kernel.hooks.contextLoad.tapPromise({ name: NAME, stage: Stage.EARLY }, async (context, turn) => {
      const loaded = turn.session.data.get(NAME) as Loaded | undefined;
      if (!loaded?.section) return context;
      return { ...context, system: [...context.system, { type: 'text', text: loaded.section }] };
    });
  },
}));

async function load(session: Session, kernel: Kernel, warn: (message: string) => void): Promise<Loaded> {
  const parts: string[] = [];
  const files: string[] = [];
  // A config without `trusted` (an SDK host's own kernel) is the host's choice: treat it as trusted.
  const guard = guardFor(session.projectRoot, kernel.config.trusted !== false, kernel.protected);
  for (const { file, layer } of discover(session.cwd, session.projectRoot, kernel.config.keelHome)) {
    const { refused } = checkRead(file, layer, guard);
    // The user's own $KEEL_HOME/AGENTS.md sits in the read-protected KEEL_HOME: it is the one file there Keel reads.
    if (refused && layer === 'project') {
      warn(`${file}: not read: ${refused}`);
      continue;
    }
    let text: string;
    try {
      text = await readFileSafely(file, layer === 'user' ? {} : ruleFor(layer, guard));
    } catch (err) {
      warn(`${file}: ${errorMessage(err)}`);
      continue;
    }
    // Front matter was validated at start-up by the CLI; here it is only stripped.
    const body = await parseFrontMatter(text, file).then((parsed) => parsed.body, () => text);
    const expanded = await expand(file, body, warn, guard, layer);
    files.push(...expanded.files);
    if (!expanded.text.trim()) continue;
    parts.push(`Contents of ${file} (${layer === 'user' ? "the user's instructions for all projects" : 'project instructions'}):\n\n${expanded.text}`);
  }
  if (!parts.length) return { files };
  const section = `# Instructions\nThese are the user's standing instructions. They take precedence over default behaviour: follow them exactly.\n\n${parts.join('\n\n')}`;
  return { section, files };
}
