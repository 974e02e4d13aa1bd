import path from 'node:path';
import which from 'which';
import { definePlugin } from '../../kernel/index.js';
import { editFileTool } from './edit-file.js';
import { globTool } from './glob.js';
import { backendFor, grepTool, type GrepBackend } from './grep.js';
import { lsTool } from './ls.js';
import { readFileTool } from './read-file.js';
import { safeFiles, type SafeFiles } from './safe-files.js';
import { writeFileTool } from './write-file.js';

export type { FileAccess } from './file-access.js';

export interface ToolsFsOptions {
  /** grep's engine: `auto` (ripgrep when on PATH, default), `rg`, or `js` (the JavaScript fallback). */
  grep?: 'auto' | 'rg' | 'js';
  /** Folder entries one glob, JavaScript grep or ls visits at most; past it the result says it stopped. Default 200 000. */
  walkLimit?: number;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** The file tools' safe open and atomic replace (regular files only, no symbolic links). */
    'safe-files': SafeFiles;
  }
}

/** The file tools: read_file, write_file, edit_file, glob, grep, ls; and the `safe-files` service. */
export default definePlugin((opts: ToolsFsOptions = {}) => ({
  name: 'tools-fs',
  kernel: '^1.0.0',
  apply(kernel) {
    let backend: GrepBackend | undefined;
    const grepBackend = (): GrepBackend => {
      if (backend) return backend;
      const choice = opts.grep ?? 'auto';
      const rg = choice === 'js' ? undefined : findOnPath('rg');
      if (choice === 'rg' && !rg) throw new Error('tools-fs: option grep is "rg", but ripgrep (rg) is not on PATH');
      backend = backendFor(rg);
      return backend;
    };
    kernel.services.provide('safe-files', safeFiles);
    for (const tool of [readFileTool, writeFileTool, editFileTool, globTool(opts.walkLimit), grepTool(grepBackend, opts.walkLimit), lsTool(opts.walkLimit)]) kernel.tools.register(tool);
  },
}));

/** `name` on PATH, or undefined; an empty entry is skipped, not read as the working folder (a cloned repository's own `rg`). */
function findOnPath(name: string): string | undefined {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean).join(path.delimiter);
  return (dirs && which.sync(name, { path: dirs, nothrow: true })) || undefined;
}
