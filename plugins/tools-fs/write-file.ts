import { z } from 'zod';
import { defineTool, errorMessage, type ToolContext, type ToolResult } from '../../kernel/index.js';
import { currentText, editorInfo, fileAccessFor, textsForDisplay, type FileAccess } from './file-access.js';
import { displayPath, resolvePath } from './paths.js';
import { lineCounts, unifiedDiff } from './patch.js';
import { remember, staleReason } from './read-state.js';
import { OpenError, openForWrite, readAll, realTarget, writeAll, type Opened } from './safe-open.js';
import { decode, encode, MAX_TEXT_BYTES, splitLines, type Encoding } from './text.js';

const input = z.object({
  path: z.string().min(1).describe('File path, absolute or relative to the working directory'),
  content: z.string().describe('The complete new content of the file'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  description:
    'Create a file, or replace all of an existing one. Overwriting a file works only after read_file has read it and if it has not changed since. To change part of a file use edit_file instead: it is safer and cheaper. Parent folders are created.',
  permission: 'write',
  input,
  paths: (i) => [i.path],
  async execute(args, ctx): Promise<ToolResult> {
    const abs = resolvePath(args.path, ctx.cwd);
    const shown = displayPath(abs, ctx.cwd);
    const access = fileAccessFor(ctx, 'write');
    if (access) return writeThroughEditor(access, args, ctx, abs, shown);
    let file: Opened & { created: boolean };
    try {
      file = await openForWrite(await realTarget(abs), shown);
    } catch (err) {
      if (err instanceof OpenError) return { content: err.kind === 'directory' ? err.message : `write_file refused: ${err.message}`, isError: true };
      throw err;
    }
    const { handle, info, created } = file;
    try {
      let before: string | undefined;
      let encoding: Encoding = 'utf8';
      let previous: Buffer | undefined;
      if (!created && info.size > MAX_TEXT_BYTES) {
        // Too large to read whole (read_file refuses it too): only a file this session wrote itself, unchanged since, is overwritten.
        const stale = staleReason(ctx.session, abs, shown, info);
        if (stale) return { content: `write_file refused: ${stale}`, isError: true };
        const head = Buffer.alloc(4);
        const { bytesRead } = await handle.read(head, 0, 4, 0);
        encoding = decode(head.subarray(0, bytesRead)).encoding;
      } else if (!created) {
        const current = await readAll(handle, info.size);
        previous = current;
        const stale = staleReason(ctx.session, abs, shown, info, current);
        if (stale) return { content: `write_file refused: ${stale}`, isError: true };
        const old = decode(current);
        before = old.text;
        encoding = old.encoding;
      }
      const bytes = encode(args.content, encoding);
      try {
        await writeAll(handle, bytes, previous);
      } catch (err) {
        return { content: `write_file: ${shown}: ${errorMessage(err)}.`, isError: true };
      }
      remember(ctx.session, abs, bytes, await handle.stat());
      const lines = splitLines(args.content).length;
      if (!created && before === undefined) return { content: `Overwrote ${shown} (${lines} ${lines === 1 ? 'line' : 'lines'}).`, display: { path: abs } };
      if (before === undefined) return { content: `Created ${shown} (${lines} ${lines === 1 ? 'line' : 'lines'}).`, display: { path: abs, created: true, linesAdded: lines, linesRemoved: 0, ...textsForDisplay(undefined, args.content) } };
      const diff = await unifiedDiff(shown, before, args.content);
      return { content: `Overwrote ${shown} (${lines} ${lines === 1 ? 'line' : 'lines'}).`, display: { path: abs, diff, ...lineCounts(diff), ...textsForDisplay(before, args.content) } };
    } finally {
      await handle.close();
    }
  },
});

/** write_file through the editor (the `file-access` service): the same read-before-overwrite rule, on its text. */
async function writeThroughEditor(access: FileAccess, args: { path: string; content: string }, ctx: ToolContext, abs: string, shown: string): Promise<ToolResult> {
  let before: string | undefined;
  try {
    before = await currentText(ctx, access, abs);
    if (before !== undefined) {
      const current = Buffer.from(before, 'utf8');
      const stale = staleReason(ctx.session, abs, shown, editorInfo(current), current);
      if (stale) return { content: `write_file refused: ${stale}`, isError: true };
    }
    await access.writeText(ctx.session, abs, args.content, ctx.signal);
  } catch (err) {
    return { content: `write_file: ${shown}: the editor could not write it: ${errorMessage(err)}`, isError: true };
  }
  const bytes = Buffer.from(args.content, 'utf8');
  remember(ctx.session, abs, bytes, editorInfo(bytes));
  const lines = splitLines(args.content).length;
  if (before === undefined) return { content: `Created ${shown} (${lines} lines).`, display: { path: abs, created: true, linesAdded: lines, linesRemoved: 0, ...textsForDisplay(undefined, args.content) } };
  const diff = await unifiedDiff(shown, before, args.content);
  return { content: `Overwrote ${shown} (${lines} lines).`, display: { path: abs, diff, ...lineCounts(diff), ...textsForDisplay(before, args.content) } };
}
