import { stat } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type ToolContext, type ToolResult } from '../../kernel/index.js';
import { searchJs } from './grep-js.js';
import { searchRg } from './grep-rg.js';
import { GrepError, type GrepFile, type GrepOutcome, type GrepQuery } from './grep-search.js';
import { ignoreRoot } from './ignore-rules.js';
import { displayPath, resolvePath } from './paths.js';
import { hiddenFilter } from './path-policy.js';
import { cutLine } from './text.js';

const MAX_FILES = 200;
const MAX_CONTENT_LINES = 400;
const MAX_LINE = 300;
const MAX_HEAD_LIMIT = 2000;

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
  head_limit: z.number().int().min(1).max(MAX_HEAD_LIMIT).optional().describe(`Entries (files or lines) to show; default ${MAX_FILES} files or ${MAX_CONTENT_LINES} lines`),
  offset: z.number().int().min(0).optional().describe('Entries to skip first, to page on'),
});

export type GrepInput = z.infer<typeof input>;

/** Which engine runs searches: ripgrep when found, else the JavaScript fallback. */
export type GrepBackend = (query: GrepQuery, signal?: AbortSignal) => Promise<GrepOutcome>;

export function backendFor(rgPath: string | undefined): GrepBackend {
  return rgPath ? (query, signal) => searchRg(rgPath, query, signal) : searchJs;
}

/** grep; `walkLimit` caps the folder entries the JavaScript walk visits. */
export function grepTool(backend: () => GrepBackend, walkLimit?: number) {
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
      // A FIFO would block the search until a writer came (for ever in the fallback's synchronous read); a device may never end.
      if (!info.isDirectory() && !info.isFile()) {
        return { content: `grep: path: ${displayPath(target, ctx.cwd)} is not a folder or a regular file (a FIFO, socket or device); grep searches files.`, isError: true };
      }
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
        walkLimit,
      };
      let outcome: GrepOutcome;
      try {
        outcome = await backend()(query, ctx.signal);
      } catch (err) {
        if (err instanceof GrepError) return { content: `grep: ${err.message}`, isError: true };
        throw err;
      }
      const filter = hiddenFilter(ctx);
      outcome = { ...outcome, files: outcome.files.filter((f) => !filter.hides(f.abs)) };
      const page = { offset: args.offset ?? 0, limit: args.head_limit };
      const note = filter.note(outcome.files.length === 0 ? 'matching files were' : 'more matching files were');
      const content = await formatGrep(outcome, mode, query.context, ctx, page);
      return { content: note ? `${content}\n${note}` : content, display: { files: outcome.files.length } };
    },
  });
}

/** Where a page of results starts and how long it is; the defaults keep one answer small. */
export interface Page {
  offset: number;
  limit?: number;
}

/** The `offset`/`head_limit` slice of `entries`, and the notice saying what was left out and how to page on. */
function paginate<T>(entries: T[], page: Page, defaultLimit: number, noun: string): { shown: T[]; notice?: string } {
  const limit = page.limit ?? defaultLimit;
  const shown = entries.slice(page.offset, page.offset + limit);
  const total = entries.length;
  if (page.offset > 0 && shown.length === 0) return { shown, notice: `[offset ${page.offset} is past the end: there are ${total} ${noun}.]` };
  const end = page.offset + shown.length;
  if (page.offset === 0 && end === total) return { shown };
  const more = end < total ? ` Call grep again with offset=${end} to see more, or narrow the search.` : '';
  return { shown, notice: `[Showing ${noun} ${page.offset + 1}-${end} of ${total}.${more}]` };
}

/** The text the model sees; shared by both backends so their results read the same. */
export async function formatGrep(
  outcome: GrepOutcome,
  mode: NonNullable<GrepInput['output_mode']>,
  context: number,
  ctx: Pick<ToolContext, 'cwd'>,
  page: Page = { offset: 0 },
): Promise<string> {
  const files = outcome.files.slice().sort((a, b) => a.abs.localeCompare(b.abs));
  const shown = (f: GrepFile) => displayPath(f.abs, ctx.cwd);
  const notes: string[] = [];
  if (outcome.truncated) notes.push('[The search stopped early: too many matches. Narrow it with path, glob or a more specific pattern.]');
  if (outcome.walkCapped) notes.push('[The search stopped after visiting its cap of folder entries, so files may be missing; narrow it with path or glob.]');
  const partial = notes.map((n) => `\n${n}`).join('');
  if (files.length === 0) return `No matches found.${partial}`;
  if (mode === 'files_with_matches') {
    const withTime = await Promise.all(files.map(async (f) => ({ f, mtime: (await stat(f.abs).catch(() => undefined))?.mtimeMs ?? 0 })));
    withTime.sort((a, b) => b.mtime - a.mtime || a.f.abs.localeCompare(b.f.abs));
    const { shown: slice, notice } = paginate(withTime, page, MAX_FILES, 'files');
    const lines = slice.map(({ f }) => shown(f));
    if (notice) lines.push(notice);
    return `${files.length} ${files.length === 1 ? 'file' : 'files'}\n${lines.join('\n')}${partial}`;
  }
  if (mode === 'count') {
    const counts = files.map((f) => ({ f, n: f.lines.filter((l) => l.match).length }));
    const total = counts.reduce((sum, c) => sum + c.n, 0);
    const { shown: slice, notice } = paginate(counts, page, MAX_FILES, 'files');
    const lines = slice.map(({ f, n }) => `${shown(f)}:${n}`);
    if (notice) lines.push(notice);
    return `${total} matching lines in ${files.length} files\n${lines.join('\n')}${partial}`;
  }
  const all = files.flatMap((f) => f.lines.map((line) => ({ f, line })));
  const { shown: slice, notice } = paginate(all, page, MAX_CONTENT_LINES, 'lines');
  const out: string[] = [];
  let prev: { f: GrepFile; n: number } | undefined;
  for (const { f, line } of slice) {
    // With context, "--" separates groups of lines that are not adjacent (as grep and ripgrep print).
    if (context > 0 && prev && (prev.f !== f || line.n !== prev.n + 1)) out.push('--');
    const sep = line.match ? ':' : '-';
    out.push(`${shown(f)}${sep}${line.n}${sep}${cutLine(line.text, MAX_LINE)}`);
    prev = { f, n: line.n };
  }
  if (notice) out.push(notice);
  return out.join('\n') + partial;
}

function realOrSame(file: string): string {
  try {
    return realpathSync.native(file);
  } catch {
    return file;
  }
}
