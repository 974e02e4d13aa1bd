import { existsSync, realpathSync, statSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, errorMessage, Stage, type Kernel, type Session } from '../../kernel/index.js';
import { INDEX_FILE, MAX_MEMORY_BYTES, parseIndex, stamp, TOPIC_DIR, topicFiles } from './index-file.js';

export interface MemoryIndexOptions {
  /** Past this many tokens (about four characters each) the agent is told to consolidate the index. */
  maxTokens?: number;
}

const NAME = 'memory-index';

/** What frontends use for `#note`: appends one line to the project's memory index. */
export interface MemoryIndexService {
  /** Appends `- <note>` to `.keel/MEMORY.md` (creating it) and returns the file written. */
  append(projectRoot: string, note: string): Promise<string>;
}

declare module '../../kernel/types.js' {
  interface Services {
    'memory-index': MemoryIndexService;
  }
}

interface Cached {
  stamp?: string;
  text?: string;
}

const GUIDE = `# Memory
Your memory for this project lives in .keel/. The index .keel/MEMORY.md is below: one line per topic, \`- name → memory/file.md (what it holds)\`. Each topic is a file in .keel/memory/; it is not loaded here, so read it with read_file when it is relevant.
When you learn something worth keeping across sessions (a decision, a convention, where things are, a pitfall), write or update its topic file with the file tools and keep its line in the index current. Keep the index short: pointers only, details go in topic files.`;

/**
 * The memory index: `.keel/MEMORY.md`, always in the system prompt (with a nudge to consolidate when it grows
 * too long); topic files `.keel/memory/*.md` are read on demand. `/memory [topic]` shows them.
 */
export default definePlugin((opts: MemoryIndexOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  // The index and topics are read as AGENTS.md is: the `project-files` service.
  dependencies: ['instructions'],
  apply(kernel) {
    const maxTokens = opts.maxTokens ?? 2000;

    kernel.hooks.contextLoad.tapPromise({ name: NAME, stage: Stage.NORMAL }, async (context, turn) => {
      const text = await readIndex(turn.session, kernel);
      // `cache_control: null` marks the block volatile (the agent may edit the index mid-session): the
      // provider puts the system prompt's cache breakpoint before it.
      return { ...context, system: [...context.system, { type: 'text', text: section(text, maxTokens), cache_control: null }] };
    });

    kernel.services.provide(NAME, {
      async append(projectRoot, note) {
        const line = note.replace(/\s*\n\s*/g, ' ').trim();
        if (!line) throw new Error('#: the note is empty; type # followed by the line to remember');
        const file = path.join(projectRoot, INDEX_FILE);
        await mkdir(path.dirname(file), { recursive: true });
        // A cloned repository's index may be a link to ~/.bashrc or ~/.gitconfig: the note is never written there.
        const refused = writeRefusal(file, projectRoot, kernel);
        if (refused) throw new Error(`#: ${file} is not written: ${refused}`);
        const before = (await readMemory(kernel, file, projectRoot)).text ?? '';
        const lead = before && !before.endsWith('\n') ? '\n' : '';
        await appendFile(file, `${lead}- ${line}\n`);
        return file;
      },
    });

    kernel.commands.register({
      name: 'memory',
      description: 'show the memory index (.keel/MEMORY.md), or a topic file: /memory <topic>',
      async run(args, ctx) {
        const root = ctx.session.projectRoot;
        const topic = args.trim();
        if (!topic) return showIndex(root, kernel);
        return showTopic(root, topic, kernel);
      },
    });
  },
}));

function real(file: string): string {
  try {
    return realpathSync.native(file);
  } catch {
    return path.resolve(file);
  }
}

/**
 * A memory file's text, read through the `project-files` service: only when it resolves inside the project (trusted
 * or not: `.keel/` is Keel's own) to no secret, is a regular file and has no other hard link; its first
 * MAX_MEMORY_BYTES. `refused` says why it was not read; neither is set when there is no such file.
 */
async function readMemory(kernel: Kernel, file: string, root: string): Promise<{ text?: string; refused?: string }> {
  try {
    const { text } = await kernel.services.require('project-files', NAME).head(file, { project: root, confined: true, maxBytes: MAX_MEMORY_BYTES });
    return { text };
  } catch (err) {
    const { code, reason } = err as { code?: string; reason?: string };
    if (code === 'ENOENT' || code === 'ENOTDIR') return {};
    return { refused: reason ?? errorMessage(err) };
  }
}

/**
 * Why a note must not be appended: a cloned repository's `.keel/MEMORY.md` may be a link to a secret, to
 * `~/.bashrc` or to any file outside the project.
 */
function writeRefusal(file: string, root: string, kernel: Kernel): string | undefined {
  const target = real(file);
  const secret = kernel.protected.match(target, 'read');
  if (secret) return secret.reason;
  const rel = path.relative(real(root), target);
  if (rel.startsWith(`..${path.sep}`) || rel === '..' || path.isAbsolute(rel)) return `it resolves to ${target}, outside the project`;
  const info = statSync(target, { throwIfNoEntry: false });
  if (info && !info.isFile()) return `${target} is not a regular file`;
  // Another name of the file may be anywhere: appending would change a file outside the project.
  if (info && info.nlink > 1) return `${target} has ${info.nlink} hard links, so the note would also change a file elsewhere`;
  return undefined;
}

async function readIndex(session: Session, kernel: Kernel): Promise<string | undefined> {
  const file = path.join(session.projectRoot, INDEX_FILE);
  const current = await stamp(file);
  const cached = (session.data.get(NAME) as Cached | undefined) ?? {};
  if (cached.stamp === current && (current === undefined || cached.text !== undefined)) return cached.text;
  const { text, refused } = current === undefined ? {} : await readMemory(kernel, file, session.projectRoot);
  if (refused && cached.stamp !== current) kernel.log('warn', `${file}: not read: ${refused}`, NAME);
  session.data.set(NAME, { stamp: current, text });
  return text;
}

/** An index this many times over its size is cut in the prompt: it is paid for on every request. */
const HARD_CAP_FACTOR = 4;

function section(text: string | undefined, maxTokens: number): string {
  if (text === undefined || !text.trim()) return `${GUIDE}\n\nThere is no index yet: create .keel/MEMORY.md when you first store a topic.`;
  const body = text.trim();
  const tokens = Math.ceil(body.length / 4);
  const nudge =
    tokens > maxTokens
      ? `\n\nThe index is about ${tokens} tokens, over the ${maxTokens} it should hold: consolidate it now (merge related lines, move details into topic files, drop stale entries).`
      : '';
  const capChars = maxTokens * HARD_CAP_FACTOR * 4;
  if (body.length <= capChars) return `${GUIDE}\n\n<memory-index path="${INDEX_FILE}">\n${body}\n</memory-index>${nudge}`;
  // Whole lines only, up to the cap.
  const cut = body.lastIndexOf('\n', capChars);
  const shown = body.slice(0, cut > 0 ? cut : capChars);
  const left = body.slice(shown.length).split('\n').filter((line) => line.trim()).length;
  return `${GUIDE}\n\n<memory-index path="${INDEX_FILE}">\n${shown}\n[… ${left} more lines not shown: read ${INDEX_FILE} with read_file]\n</memory-index>${nudge}`;
}

async function showIndex(root: string, kernel: Kernel): Promise<string> {
  const file = path.join(root, INDEX_FILE);
  const { text, refused } = await readMemory(kernel, file, root);
  if (refused) return `${file} is not shown: ${refused}`;
  const topics = await topicFiles(root);
  const list = topics.length ? `\n\nTopic files in ${TOPIC_DIR}: ${topics.join(', ')}` : '';
  if (text === undefined) return `No memory index yet (${path.join(root, INDEX_FILE)}).${list}`;
  return `${text.trim()}${list}`;
}

async function showTopic(root: string, topic: string, kernel: Kernel): Promise<string> {
  const dir = path.join(root, TOPIC_DIR);
  const indexFile = path.join(root, INDEX_FILE);
  const index = (await readMemory(kernel, indexFile, root)).text ?? '';
  const entry = parseIndex(index).find((e) => e.name.toLowerCase() === topic.toLowerCase());
  const candidates = entry
    ? [path.resolve(root, '.keel', entry.target)]
    : [path.resolve(dir, topic), path.resolve(dir, `${topic}.md`)];
  for (const file of candidates) {
    // Only files inside .keel/ are shown, whatever the index or the argument says.
    if (!file.startsWith(path.join(root, '.keel') + path.sep)) continue;
    // … and only when, links resolved, they are still in the project and no secret (a folder of that name is passed over).
    if (!existsSync(file) || statSync(file).isDirectory()) continue;
    const { text, refused } = await readMemory(kernel, file, root);
    if (refused) return `${path.relative(root, file)} is not shown: ${refused}`;
    if (text !== undefined) return `${path.relative(root, file)}:\n\n${text.trim()}`;
  }
  const known = [...parseIndex(index).map((e) => e.name), ...(await topicFiles(root)).map((f) => f.replace(/\.md$/, ''))];
  return `No memory topic "${topic}"${known.length ? ` (known: ${[...new Set(known)].join(', ')})` : ''}.`;
}
