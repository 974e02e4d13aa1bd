import { readdir, lstat, readlink } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { defineTool, type ToolResult } from '../../kernel/index.js';
import { displayPath, formatSize, resolvePath } from './paths.js';

const MAX_ENTRIES = 500;

const input = z.object({
  path: z.string().optional().describe('Folder to list (default: the working directory)'),
  ignore: z.array(z.string()).optional().describe('Glob patterns of names to leave out'),
});

export const lsTool = defineTool({
  name: 'ls',
  description: 'List a folder: subfolders first (marked /), then files with sizes, symbolic links with their targets. Not recursive: use glob to find files in a tree.',
  permission: 'read',
  input,
  paths: (i) => [i.path ?? '.'],
  async execute(args, ctx): Promise<ToolResult> {
    const dir = resolvePath(args.path ?? '.', ctx.cwd);
    const shown = displayPath(dir, ctx.cwd);
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => err);
    if (entries instanceof Error) {
      const why = entries.code === 'ENOENT' ? 'does not exist' : entries.code === 'ENOTDIR' ? 'is not a folder' : `cannot be read (${entries.code})`;
      return { content: `ls: ${shown} ${why}.`, isError: true };
    }
    const skip = args.ignore?.length ? picomatch(args.ignore, { dot: true }) : () => false;
    const kept = entries.filter((e) => !skip(e.name));
    const dirs = kept.filter((e) => e.isDirectory()).map((e) => e.name).sort();
    const others = kept.filter((e) => !e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name));
    const shownDirs = dirs.slice(0, MAX_ENTRIES);
    const lines = shownDirs.map((name) => `${name}/`);
    for (const entry of others.slice(0, MAX_ENTRIES - shownDirs.length)) {
      const abs = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) lines.push(`${entry.name} -> ${await readlink(abs).catch(() => '?')}`);
      else lines.push(`${entry.name}  ${formatSize((await lstat(abs).catch(() => undefined))?.size ?? 0)}`);
    }
    const hidden = entries.length - kept.length;
    const head = `${shown}: ${dirs.length} folders, ${others.length} files${hidden ? ` (${hidden} left out by ignore)` : ''}`;
    const rest = kept.length - lines.length;
    if (rest > 0) lines.push(`[${rest} more entries not shown; use glob to narrow down.]`);
    return { content: [head, ...lines].join('\n') };
  },
});
