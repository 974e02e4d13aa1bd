import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { defineTool, type ToolResult } from '../../kernel/index.js';
import { IgnoreRules, ignoreRoot } from './ignore-rules.js';
import { displayPath, resolvePath } from './paths.js';
import { hiddenFilter } from './path-policy.js';
import { walkBudget, walkFiles } from './walk.js';

const MAX_RESULTS = 200;
const STAT_BATCH = 512;

function mtimeOf(abs: string): number {
  try {
    return statSync(abs).mtimeMs;
  } catch {
    return 0;
  }
}

const input = z.object({
  pattern: z.string().min(1).describe('Glob, e.g. "**/*.ts" or "src/**/index.{js,ts}"'),
  path: z.string().optional().describe('Folder to search (default: the working directory)'),
});

/** glob, walking at most `maxEntries` folder entries. */
export function globTool(maxEntries?: number) {
  return defineTool({
    name: 'glob',
    description: `Find files by name pattern. Respects .gitignore; newest files first; at most ${MAX_RESULTS} results. Use "**/" to search subfolders. To search file contents use grep.`,
    permission: 'read',
    input,
    paths: (i) => [path.isAbsolute(i.pattern) ? picomatch.scan(i.pattern).base || '/' : (i.path ?? '.')],
    async execute(args, ctx): Promise<ToolResult> {
      let base = resolvePath(args.path ?? '.', ctx.cwd);
      let pattern = args.pattern;
      if (path.isAbsolute(pattern)) {
        // An absolute pattern names its own folder: split it into the literal base and the glob.
        const scanned = picomatch.scan(pattern);
        base = scanned.base || '/';
        pattern = scanned.glob || path.basename(pattern);
      }
      const info = await stat(base).catch(() => undefined);
      if (!info?.isDirectory()) return { content: `glob: ${displayPath(base, ctx.cwd)} is not a folder.`, isError: true };
      const match = picomatch(pattern, { dot: true });
      const rules = new IgnoreRules(ignoreRoot(base, ctx.session.projectRoot));
      const matched: string[] = [];
      const budget = walkBudget(maxEntries);
      const filter = hiddenFilter(ctx);
      for await (const file of walkFiles(base, rules, ctx.signal, budget)) if (match(file.rel) && !filter.hides(file.abs)) matched.push(file.abs);
      const found: Array<{ abs: string; mtime: number }> = [];
      // Modification times for the newest-first order: synchronous stats (a thread-pool round trip each cost more
      // than the stat), yielding to the event loop between batches.
      for (let i = 0; i < matched.length; i += STAT_BATCH) {
        if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        ctx.signal.throwIfAborted();
        for (const abs of matched.slice(i, i + STAT_BATCH)) found.push({ abs, mtime: mtimeOf(abs) });
      }
      const capped = budget.capped
        ? `[The search stopped after visiting ${budget.maxEntries} entries, so files may be missing; narrow the path or the pattern.]`
        : '';
      const hidden = filter.note('matching files were');
      if (found.length === 0) return { content: [`No files match ${args.pattern} in ${displayPath(base, ctx.cwd)}.`, hidden, capped].filter(Boolean).join('\n') };
      found.sort((a, b) => b.mtime - a.mtime || a.abs.localeCompare(b.abs));
      const lines = found.slice(0, MAX_RESULTS).map((f) => displayPath(f.abs, ctx.cwd));
      if (found.length > MAX_RESULTS) lines.push(`[${found.length - MAX_RESULTS} more files not shown; narrow the pattern or the path.]`);
      if (hidden) lines.push(hidden);
      if (capped) lines.push(capped);
      return { content: lines.join('\n'), display: { count: found.length, capped: budget.capped } };
    },
  });
}
