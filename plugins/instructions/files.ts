import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseFrontMatter } from './front-matter.js';
import { judgeFile, readFileSafely, realPath, type ReadRule } from './safe-read.js';

export { realPath } from './safe-read.js';

export const NAMES = ['AGENTS.md', 'CLAUDE.md'];

/** Imports nest at most this deep. */
export const MAX_IMPORT_DEPTH = 5;

export interface InstructionFile {
  file: string;
  layer: 'user' | 'project';
}

/** What an instruction file or an import may read. */
export interface ReadGuard {
  /** The project root, symlinks resolved. */
  root: string;
  /** False in an untrusted folder: project files and their imports stay inside `root`. */
  trusted: boolean;
  /** Why reading a resolved path is refused (Keel's credentials, SSH keys: `kernel.protected` for reads), else undefined. */
  secret(resolved: string): string | undefined;
}

/**
 * Where `file` (read for `layer`) really is, and why it must not be read. Secrets are refused everywhere; in an
 * untrusted folder a project file must also resolve inside the project and not be a hard link (which may be a
 * file elsewhere). Read `real`, not `file`, so a link swapped after the check changes nothing.
 */
export function checkRead(file: string, layer: InstructionFile['layer'], guard: ReadGuard): { real: string; refused?: string } {
  return judgeFile(file, ruleFor(layer, guard));
}

/** The read rule for a file of `layer`: secrets everywhere, and an untrusted folder's project files confined to it. */
export function ruleFor(layer: InstructionFile['layer'], guard: ReadGuard): ReadRule {
  return { secret: guard.secret, ...(guard.trusted || layer === 'user' ? {} : { confineTo: guard.root }) };
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `$KEEL_HOME/AGENTS.md`, then AGENTS.md and CLAUDE.md from the repository root down to `cwd`. */
export function discover(cwd: string, projectRoot: string, keelHome: string): InstructionFile[] {
  const found: InstructionFile[] = [];
  if (keelHome) {
    const user = path.join(keelHome, 'AGENTS.md');
    if (isFile(user)) found.push({ file: user, layer: 'user' });
  }
  const root = path.resolve(projectRoot);
  const dirs: string[] = [];
  let dir = path.resolve(cwd);
  for (;;) {
    dirs.unshift(dir);
    if (dir === root) break;
    const parent = path.dirname(dir);
    // cwd outside the project root: only cwd itself.
    if (parent === dir) {
      dirs.splice(0, dirs.length - 1);
      break;
    }
    dir = parent;
  }
  for (const d of dirs) {
    for (const name of NAMES) {
      const file = path.join(d, name);
      if (isFile(file)) found.push({ file, layer: 'project' });
    }
  }
  return found;
}

/** Blanks out code (fenced and inline) so `@` inside it is not taken for an import. */
function maskCode(text: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, ' ');
  return text.replace(/```[\s\S]*?(?:```|$)/g, blank).replace(/`[^`\n]*`/g, blank);
}

// Dot-led segments count (`@~/.claude/notes.md`, `@../../docs/x.md`): what they may reach is the guard's job.
const IMPORT = /(?<![\w@`/])@((?:~\/|\/)?[\w.][\w.\-/]*)/g;

/** The `@path` imports in a text, in order, trailing punctuation removed. */
export function importsOf(text: string): string[] {
  const refs: string[] = [];
  for (const match of maskCode(text).matchAll(IMPORT)) {
    const ref = match[1]!.replace(/[.,;:!?)]+$/, '');
    if (/\w/.test(ref) && !refs.includes(ref)) refs.push(ref);
  }
  return refs;
}

function resolveRef(ref: string, from: string): string {
  if (ref.startsWith('~/')) return path.join(os.homedir(), ref.slice(2));
  return path.resolve(path.dirname(from), ref);
}

export interface Expanded {
  text: string;
  /** Every file read, the top file first. */
  files: string[];
}

/**
 * A file's body with its `@relative/path` imports appended after it (recursively, depth ≤ 5, each file once,
 * cycles cut). References that name no file (an @mention) are left as they are; an import `guard` refuses is
 * left out with a one-line warning.
 */
export async function expand(
  file: string,
  body: string,
  warn: (message: string) => void,
  guard: ReadGuard,
  layer: InstructionFile['layer'] = 'project',
): Promise<Expanded> {
  const seen = new Set<string>([path.resolve(file)]);
  const parts: string[] = [body.trim()];
  const walk = async (text: string, from: string, depth: number, chain: string[]) => {
    for (const ref of importsOf(text)) {
      const target = resolveRef(ref, from);
      if (!existsSync(target) || !isFile(target)) continue;
      if (chain.includes(target)) {
        warn(`${from}: @${ref} imports ${target}, which imports it back: cycle cut`);
        continue;
      }
      if (seen.has(target)) continue;
      const { refused } = checkRead(target, layer, guard);
      if (refused) {
        warn(`${from}: @${ref}: import refused: ${refused}`);
        continue;
      }
      if (depth > MAX_IMPORT_DEPTH) {
        warn(`${from}: @${ref} is nested deeper than ${MAX_IMPORT_DEPTH} imports: not expanded`);
        continue;
      }
      seen.add(target);
      let raw: string;
      try {
        raw = await readFileSafely(target, ruleFor(layer, guard));
      } catch (err) {
        warn(`${from}: @${ref}: import refused: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      const imported = await parseFrontMatter(raw, target).then((parsed) => parsed.body, () => raw);
      parts.push(`Imported from ${target} (@${ref}):\n${imported.trim()}`);
      await walk(imported, target, depth + 1, [...chain, target]);
    }
  };
  await walk(body, path.resolve(file), 1, [path.resolve(file)]);
  return { text: parts.join('\n\n'), files: [...seen] };
}
