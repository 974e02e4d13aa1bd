import { lstat, opendir, readlink } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { defineTool, type ToolResult } from '../../kernel/index.js';
import { displayPath, formatSize, resolvePath } from './paths.js';
import { hiddenFilter } from './path-policy.js';
import { MAX_WALK_ENTRIES } from './walk.js';

const MAX_ENTRIES = 500;

const input = z.object({
  path: z.string().optional().describe('Folder to list (default: the working directory)'),
  ignore: z.array(z.string()).optional().describe('Glob patterns of names to leave out'),
});

/** Folders first, then by name. */
function order(a: Dirent, b: Dirent): number {
  const byKind = Number(b.isDirectory()) - Number(a.isDirectory());
  return byKind || a.name.localeCompare(b.name);
}

interface Scan {
  /** The first `MAX_ENTRIES` entries in listing order. */
  first: Dirent[];
  dirs: number;
  files: number;
  hidden: number;
  /** True when the folder holds more than `maxEntries` entries and reading stopped there. */
  capped: boolean;
}

/**
 * Reads a folder as a stream, keeping only the entries that will be shown (a folder of a million entries is
 * never held whole), and stops counting after `maxEntries`.
 */
async function scan(dir: string, skip: (name: string) => boolean, maxEntries: number, signal: AbortSignal): Promise<Scan> {
  const result: Scan = { first: [], dirs: 0, files: 0, hidden: 0, capped: false };
  let read = 0;
  for await (const entry of await opendir(dir)) {
    if (++read > maxEntries) {
      result.capped = true;
      break;
    }
    if (read % 4096 === 0) signal.throwIfAborted();
    if (skip(entry.name)) {
      result.hidden++;
      continue;
    }
    if (entry.isDirectory()) result.dirs++;
    else result.files++;
    result.first.push(entry);
    if (result.first.length >= 2 * MAX_ENTRIES) result.first = result.first.sort(order).slice(0, MAX_ENTRIES);
  }
  result.first = result.first.sort(order).slice(0, MAX_ENTRIES);
  return result;
}

/** ls, reading at most `maxEntries` entries of the folder. */
export function lsTool(maxEntries = MAX_WALK_ENTRIES) {
  return defineTool({
    name: 'ls',
    description: 'List a folder: subfolders first (marked /), then files with sizes, symbolic links with their targets. Not recursive: use glob to find files in a tree.',
    permission: 'read',
    input,
    paths: (i) => [i.path ?? '.'],
    async execute(args, ctx): Promise<ToolResult> {
      const dir = resolvePath(args.path ?? '.', ctx.cwd);
      const shown = displayPath(dir, ctx.cwd);
      const ignored = args.ignore?.length ? picomatch(args.ignore, { dot: true }) : () => false;
      const filter = hiddenFilter(ctx);
      const skip = (name: string) => ignored(name) || filter.hides(path.join(dir, name));
      let found: Scan;
      try {
        found = await scan(dir, skip, maxEntries, ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        const code = (err as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'does not exist' : code === 'ENOTDIR' ? 'is not a folder' : `cannot be read (${code})`;
        return { content: `ls: ${shown} ${why}.`, isError: true };
      }
      const lines: string[] = [];
      for (const entry of found.first) {
        const abs = path.join(dir, entry.name);
        if (entry.isDirectory()) lines.push(`${entry.name}/`);
        else if (entry.isSymbolicLink()) lines.push(`${entry.name} -> ${await readlink(abs).catch(() => '?')}`);
        else lines.push(`${entry.name}  ${formatSize((await lstat(abs).catch(() => undefined))?.size ?? 0)}`);
      }
      const ignoredCount = found.hidden - filter.count();
      const counts = `${found.dirs} folders, ${found.files} files${ignoredCount ? ` (${ignoredCount} left out by ignore)` : ''}`;
      const policyNote = filter.note('entries were');
      if (policyNote) lines.push(policyNote);
      if (found.capped) {
        return {
          content: [
            `${shown}: more than ${maxEntries} entries; stopped reading after ${maxEntries} (${counts} among them)`,
            ...lines,
            `[Only the first ${maxEntries} entries the folder returned were read, so this is not the whole folder in order; use glob with a pattern to find what you need.]`,
          ].join('\n'),
        };
      }
      const rest = found.dirs + found.files - lines.length;
      if (rest > 0) lines.push(`[${rest} more entries not shown; use glob to narrow down.]`);
      return { content: [`${shown}: ${counts}`, ...lines].join('\n') };
    },
  });
}
