/**
 * `/add-dir <dir>`: one more folder that counts as inside the project for this session, on the same path as
 * `--add-dir` (config `additionalDirectories`): the roots confinement checks against.
 */
import { statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandDefinition, Session } from '../../kernel/index.js';
import { resolveReal } from './paths.js';

const KEY = 'permissions:added-dirs';

/** The folders `/add-dir` added to this session, resolved. */
export function addedDirs(session: Session): string[] {
  return (session.data.get(KEY) as string[] | undefined) ?? [];
}

function expand(dir: string, cwd: string): string {
  if (dir === '~' || dir.startsWith('~/')) return path.join(os.homedir(), dir.slice(1));
  return path.resolve(cwd, dir);
}

export function addDirCommand(configured: () => string[]): CommandDefinition {
  return {
    name: 'add-dir',
    description: 'let the tools work in one more folder for this session, as --add-dir does (/add-dir <dir>)',
    async run(args, { session }) {
      const given = args.trim().replace(/^(["'])(.*)\1$/, '$2');
      if (!given) {
        const all = [...configured(), ...addedDirs(session)];
        return all.length ? `Folders besides the project:\n${all.map((d) => `  ${d}`).join('\n')}` : 'No folders besides the project; /add-dir <dir> adds one.';
      }
      const real = resolveReal(expand(given, session.cwd));
      let isDir = false;
      try {
        isDir = statSync(real).isDirectory();
      } catch {
        throw new Error(`${given}: no such folder`);
      }
      if (!isDir) throw new Error(`${given}: not a folder`);
      if (real === path.parse(real).root || real === resolveReal(os.homedir())) {
        throw new Error(`${given}: that would open ${real === path.parse(real).root ? 'the whole file system' : 'your whole home folder'}; name a narrower folder`);
      }
      const root = resolveReal(session.projectRoot);
      const all = [root, ...configured(), ...addedDirs(session)];
      if (all.some((d) => real === d || real.startsWith(`${d}${path.sep}`))) return `${real} is already inside the project or an added folder.`;
      session.data.set(KEY, [...addedDirs(session), real]);
      return `Added ${real}: the tools may work there for this session (as with --add-dir ${real}).`;
    },
  };
}
