/** Temp workspaces and KEEL_HOME dirs that tests create and always remove. */
import { runMarker } from './run-marker.js';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Workspace {
  /** The project directory (a git-less project root unless `git` is set). */
  dir: string;
  /** An isolated KEEL_HOME. */
  home: string;
  write(relative: string, content: string): string;
  path(relative: string): string;
  cleanup(): void;
}

export function makeWorkspace(opts: { git?: boolean } = {}): Workspace {
  const base = mkdtempSync(path.join(tmpdir(), `keel-test-${runMarker}-`));
  const dir = path.join(base, 'project');
  const home = path.join(base, 'home');
  mkdirSync(dir, { recursive: true });
  mkdirSync(home, { recursive: true });
  if (opts.git) mkdirSync(path.join(dir, '.git'));
  return {
    dir,
    home,
    write(relative, content) {
      const file = path.join(dir, relative);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    path: (relative) => path.join(dir, relative),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}
