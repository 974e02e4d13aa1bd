/**
 * Where skills come from, in precedence order (the first of a name wins): the project's `.claude/skills`,
 * `.agents/skills` and `.keel/skills` (from the working folder up to the project root), then the user's
 * `~/.claude/skills` and `$KEEL_HOME/skills`, then folders that plugins offer as `skills:<plugin>` services.
 */
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kernel } from '../../kernel/index.js';

export type SkillOrigin = 'project' | 'user' | 'plugin';

export interface SkillFolder {
  /** The folder holding SKILL.md. */
  dir: string;
  file: string;
  origin: SkillOrigin;
  /** Where it was found, for messages: ".claude/skills", "plugin my-plugin". */
  where: string;
}

/** What a plugin that ships skills offers, as the service `skills:<plugin>`: folders of skill folders (or skill folders). */
export interface SkillSource {
  dirs: string[];
}

const PROJECT_DIRS = [path.join('.claude', 'skills'), path.join('.agents', 'skills'), path.join('.keel', 'skills')];

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The skill folders directly under `root` (or `root` itself when it holds a SKILL.md), sorted by name. */
function skillsUnder(root: string, origin: SkillOrigin, where: string): SkillFolder[] {
  if (isFile(path.join(root, 'SKILL.md'))) return [{ dir: root, file: path.join(root, 'SKILL.md'), origin, where }];
  let names: string[];
  try {
    names = readdirSync(root).sort();
  } catch {
    return [];
  }
  return names
    .filter((name) => !name.startsWith('.'))
    .map((name) => path.join(root, name))
    .filter((dir) => isDir(dir) && isFile(path.join(dir, 'SKILL.md')))
    .map((dir) => ({ dir, file: path.join(dir, 'SKILL.md'), origin, where }));
}

/** The folders from `cwd` up to `root`, nearest first (just `root` when cwd is outside it). */
function projectFolders(cwd: string, root: string): string[] {
  const out: string[] = [];
  let dir = path.resolve(cwd);
  const top = path.resolve(root);
  if (path.relative(top, dir).startsWith('..')) return [top];
  for (;;) {
    out.push(dir);
    if (dir === top) return out;
    const up = path.dirname(dir);
    if (up === dir) return out;
    dir = up;
  }
}

/** `where`: the session's working folder and project root (or the config's, for `keel doctor`). */
export function findSkillFolders(kernel: Kernel, where: { cwd: string; projectRoot: string }): SkillFolder[] {
  const found: SkillFolder[] = [];
  for (const folder of projectFolders(where.cwd, where.projectRoot)) {
    for (const rel of PROJECT_DIRS) found.push(...skillsUnder(path.join(folder, rel), 'project', rel));
  }
  found.push(...skillsUnder(path.join(os.homedir(), '.claude', 'skills'), 'user', '~/.claude/skills'));
  if (kernel.config.keelHome) found.push(...skillsUnder(path.join(kernel.config.keelHome, 'skills'), 'user', '$KEEL_HOME/skills'));
  for (const name of kernel.services.names().filter((n) => n.startsWith('skills:')).sort()) {
    const source = kernel.services.get(name) as Partial<SkillSource> | undefined;
    for (const dir of Array.isArray(source?.dirs) ? source.dirs : []) {
      if (typeof dir === 'string') found.push(...skillsUnder(path.resolve(dir), 'plugin', `plugin ${name.slice('skills:'.length)}`));
    }
  }
  return found;
}
