import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type ToolContext, type ToolResult } from '../../kernel/index.js';
import { searchJs } from './grep-js.js';
import { searchRg } from './grep-rg.js';
import { GrepError, type GrepFile, type GrepOutcome, type GrepQuery } from './grep-search.js';
import { ignoreRoot } from './ignore-rules.js';
import { displayPath, resolvePath } from './paths.js';
import { cutLine } from './text.js';

const MAX_FILES = 200;
const MAX_CONTENT_LINES = 400;
const MAX_LINE = 300;

const input = z.object({
  pattern: z.string().min(1).describe('Regular expression (ripgrep syntax)'),
  path: z.string().optional().describe('File or folder to search (default: the working directory)'),
  glob: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" or "src/**/*.{js,jsx}"'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe('files_with_matches (default): paths, newest first; content: matching lines; count: matches per file'),
  context: z.number().int().min(0).max(20).optional().describe('Lines of context around matches (content mode)'),
  case_insensitive: z.boolean().optional(),
  multiline: z.boolean().optional().describe('Let the pattern span lines (. still stops at newlines; use \\n or [\\s\\S])'),
});

export type GrepInput = z.infer<typeof input>;

/** Which engine runs searches: ripgrep when found, else the JavaScript fallback. */
export type GrepBackend = (query: GrepQuery, signal?: AbortSignal) => Promise<GrepOutcome>;

export function backendFor(rgPath: string | undefined): GrepBackend {
  return rgPath ? (query, signal) => searchRg(rgPath, query, signal) : searchJs;
}

export function grepTool(backend: () => GrepBackend) {
  return defineTool({
    name: 'grep',
    description:
      'Search file contents with a regular expression (ripgrep syntax: escape literal braces, e.g. "interface\\{\\}"). Respects .gitignore. Narrow with path and glob. output_mode: files_with_matches (default), content (lines with numbers; add context), or count. Use this instead of grep or rg in bash.',
    permission: 'read',
    input,
    paths: (i) => [i.path ?? '.'],
    async execute(args, ctx): Promise<ToolResult> {
      const target = resolvePath(args.path ?? '.', ctx.cwd);
      const info = await stat(target).catch(() => undefined);
      if (!info) return { content: `grep: ${displayPath(target, ctx.cwd)} does not exist.`, isError: true };
      const mode = args.output_mode ?? 'files_with_matches';
      const dir = info.isDirectory() ? target : path.dirname(target);
      const query: GrepQuery = {
        pattern: args.pattern,
        target,
        ignoreRoot: ignoreRoot(dir, ctx.session.projectRoot),
        glob: args.glob,
        ignoreCase: args.case_insensitive ?? false,
        multiline: args.multiline ?? false,
        context: args.context ?? 0,
        filesOnly: mode === 'files_with_matches',
      };
      let outcome: GrepOutcome;
      try {
        outcome = await backend()(query, ctx.signal);
      } catch (err) {
        if (err instanceof GrepError) return { content: `grep: ${err.message}`, isError: true };
        throw err;
      }
      return { content: await formatGrep(outcome, mode, query.context, ctx), display: { files: outcome.files.length } };
    },
  });
}

/** The text the model sees; shared by both backends so their results read the same. */
export async function formatGrep(
  outcome: GrepOutcome,
  mode: NonNullable<GrepInput['output_mode']>,
  context: number,
  ctx: Pick<ToolContext, 'cwd'>,
): Promise<string> {
  const files = outcome.files.slice().sort((a, b) => a.abs.localeCompare(b.abs));
  const shown = (f: GrepFile) => displayPath(f.abs, ctx.cwd);
  const partial = outcome.truncated ? '\n[The search stopped early: too many matches. Narrow it with path, glob or a more specific pattern.]' : '';
  if (files.length === 0) return 'No matches found.';
  if (mode === 'files_with_matches') {
    const withTime = await Promise.all(files.map(async (f) => ({ f, mtime: (await stat(f.abs).catch(() => undefined))?.mtimeMs ?? 0 })));
    withTime.sort((a, b) => b.mtime - a.mtime || a.f.abs.localeCompare(b.f.abs));
    const lines = withTime.slice(0, MAX_FILES).map(({ f }) => shown(f));
    if (files.length > MAX_FILES) lines.push(`[${files.length - MAX_FILES} more files not shown; narrow the search.]`);
    return `${files.length} ${files.length === 1 ? 'file' : 'files'}\n${lines.join('\n')}${partial}`;
  }
  if (mode === 'count') {
    const counts = files.map((f) => ({ f, n: f.lines.filter((l) => l.match).length }));
    const total = counts.reduce((sum, c) => sum + c.n, 0);
    const lines = counts.slice(0, MAX_FILES).map(({ f, n }) => `${shown(f)}:${n}`);
    if (files.length > MAX_FILES) lines.push(`[${files.length - MAX_FILES} more files not shown.]`);
    return `${total} matching lines in ${files.length} files\n${lines.join('\n')}${partial}`;
  }
  const out: string[] = [];
  let total = 0;
  let kept = 0;
  for (const f of files) {
    let prev = -1;
    for (const line of f.lines) {
      total++;
      if (kept >= MAX_CONTENT_LINES) continue;
      // With context, "--" separates groups of lines that are not adjacent (as grep and ripgrep print).
      if (context > 0 && out.length > 0 && line.n !== prev + 1) out.push('--');
      const sep = line.match ? ':' : '-';
      out.push(`${shown(f)}${sep}${line.n}${sep}${cutLine(line.text, MAX_LINE)}`);
      kept++;
      prev = line.n;
    }
  }
  if (total > kept) out.push(`[${total} lines in all, only the first ${MAX_CONTENT_LINES} shown; narrow the search or use files_with_matches.]`);
  return out.join('\n') + partial;
}
