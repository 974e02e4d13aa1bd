/**
 * Where custom commands come from, in precedence order (the first of a name wins): the project's
 * `.claude/commands` and `.keel/commands`, then the user's `~/.claude/commands` and `$KEEL_HOME/commands`.
 * Every `.md` file below them is a command; sub-folders namespace it (`frontend/component.md` → `frontend:component`).
 */
import { readdirSync, type Dirent } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type CommandOrigin = 'project' | 'user';

export interface CommandFile {
  name: string;
  file: string;
  origin: CommandOrigin;
  /** Where it was found, for messages and `/help`: "project", "user". */
  where: string;
}

const NAME_PART = /^[A-Za-z][\w-]*$/;
/** Folders of commands nested deeper than this are not searched (a symlink loop, a vendored tree). */
const MAX_DEPTH = 4;

function walk(root: string, rel: string[], depth: number, out: Array<{ parts: string[]; file: string }>): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(path.join(root, ...rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isDirectory() && depth < MAX_DEPTH) walk(root, [...rel, entry.name], depth + 1, out);
    else if ((entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith('.md')) out.push({ parts: [...rel, entry.name.slice(0, -3)], file: path.join(root, ...rel, entry.name) });
  }
}

/** Returns the files found and one line per file whose name cannot be a command. */
export function findCommandFiles(where: { projectRoot: string; keelHome: string }): { files: CommandFile[]; errors: string[] } {
  const roots: Array<{ dir: string; origin: CommandOrigin }> = [
    { dir: path.join(where.projectRoot, '.claude', 'commands'), origin: 'project' },
    { dir: path.join(where.projectRoot, '.keel', 'commands'), origin: 'project' },
    { dir: path.join(os.homedir(), '.claude', 'commands'), origin: 'user' },
    ...(where.keelHome ? [{ dir: path.join(where.keelHome, 'commands'), origin: 'user' as const }] : []),
  ];
  const files: CommandFile[] = [];
  const errors: string[] = [];
  for (const { dir, origin } of roots) {
    const found: Array<{ parts: string[]; file: string }> = [];
    walk(dir, [], 0, found);
    for (const { parts, file } of found) {
      const bad = parts.find((part) => !NAME_PART.test(part));
      if (bad !== undefined) {
        errors.push(`${file}: "${bad}" cannot be part of a command name (letters, digits, _ and - only)`);
        continue;
      }
      files.push({ name: parts.join(':').toLowerCase(), file, origin, where: origin });
    }
  }
  return { files, errors };
}
