/**
 * The `project-files` service: how the other plugins read the Markdown files they load by name (skills, custom
 * commands, output styles, agent files, the memory index) as `AGENTS.md` is read — the one reader, safe-read.ts.
 */
import type { Kernel } from '../../kernel/index.js';
import { readFileSafely, readHeadSafely, realPath, type ReadRule } from './safe-read.js';

export interface ProjectFileOptions {
  /**
   * The root of the project the file comes from: the file is then judged as the project's. It must resolve to no
   * read-protected path (`kernel.protected`: `~/.ssh`, `.env`, `$KEEL_HOME`) and, in an untrusted folder, inside that
   * root and without another hard link.
   */
  project?: string;
  /** Confine to `project` in a trusted folder too (Keel's own `.keel/` files). */
  confined?: boolean;
  /** Default 1 MiB. */
  maxBytes?: number;
}

export interface ProjectFilesService {
  /**
   * The file's text: only a regular file (no FIFO, device or folder) of at most `maxBytes`, read through its resolved
   * path. Throws an Error saying why, without the file's name: "not read: <reason>" when refused (the reason is also
   * its `reason`), "cannot be read: ENOENT" when it could not be opened (the errno name is also its `code`).
   */
  read(file: string, opts?: ProjectFileOptions): Promise<string>;
  /** As `read`, but a larger file is cut: its first `maxBytes` bytes, and its whole size. */
  head(file: string, opts?: ProjectFileOptions): Promise<{ text: string; size: number }>;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** Reads a project's or the user's Markdown files safely (plugin `instructions`). */
    'project-files': ProjectFilesService;
  }
}

export function projectFiles(kernel: Kernel): ProjectFilesService {
  const ruleOf = (opts: ProjectFileOptions): ReadRule => {
    if (opts.project === undefined) return { maxBytes: opts.maxBytes };
    // A config without `trusted` (an SDK host's own kernel) is the host's choice: treat it as trusted.
    const untrusted = kernel.config.trusted === false;
    return {
      secret: (real) => kernel.protected.match(real, 'read')?.reason,
      ...(untrusted || opts.confined ? { confineTo: realPath(opts.project), confineLabel: opts.confined ? 'the project' : 'the untrusted project' } : {}),
      maxBytes: opts.maxBytes,
    };
  };
  return {
    read: (file, opts = {}) => readFileSafely(file, ruleOf(opts)),
    head: (file, opts = {}) => readHeadSafely(file, ruleOf(opts)),
  };
}
