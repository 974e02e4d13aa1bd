import { z } from 'zod';
import { defineTool, errorMessage, type ToolContext, type ToolResult } from '../../kernel/index.js';
import { currentText, editorInfo, fileAccessFor, textsForDisplay, type FileAccess } from './file-access.js';
import { displayPath, formatSize, resolvePath } from './paths.js';
import { lineCounts, unifiedDiff } from './patch.js';
import { remember } from './read-state.js';
import { OpenError, openForWrite, openReal, readAll, realTarget, writeAll, type Opened } from './safe-open.js';
import { missingPathHint } from './suggest.js';
import { decode, dominantEol, encode, isBinary, lossyDecoding, MAX_TEXT_BYTES } from './text.js';

const edit = z.object({
  old_string: z.string(),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});

type Edit = z.infer<typeof edit>;

const input = z
  .object({
    path: z.string().min(1).describe('File path, absolute or relative to the working directory'),
    old_string: z.string().optional().describe('Exact text to replace (unique in the file unless replace_all)'),
    new_string: z.string().optional().describe('Replacement text'),
    replace_all: z.boolean().optional().describe('Replace every occurrence'),
    edits: z.array(edit).min(1).optional().describe('Several edits applied in order, all or none'),
  })
  .superRefine((value, ctx) => {
    if (value.edits && value.old_string !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['edits'], message: 'give either edits or old_string/new_string, not both' });
    } else if (!value.edits) {
      if (value.old_string === undefined) ctx.addIssue({ code: 'custom', path: ['old_string'], message: 'required (or give edits)' });
      if (value.new_string === undefined) ctx.addIssue({ code: 'custom', path: ['new_string'], message: 'required (or give edits)' });
    }
  });

export const editFileTool = defineTool({
  name: 'edit_file',
  description:
    "Replace exact text in a file. old_string must match the file exactly (whitespace and indentation included, without read_file's line-number prefix) and be unique, unless replace_all is set; include enough surrounding lines to make it unique. For several changes to one file pass edits: [{old_string, new_string, replace_all?}], applied in order, all or none. Line endings and encoding are kept. Returns a diff. An empty old_string on a missing file creates it.",
  permission: 'write',
  input,
  paths: (i) => [i.path],
  async execute(args, ctx): Promise<ToolResult> {
    const abs = resolvePath(args.path, ctx.cwd);
    const shown = displayPath(abs, ctx.cwd);
    const edits: Edit[] = args.edits ?? [{ old_string: args.old_string ?? '', new_string: args.new_string ?? '', replace_all: args.replace_all }];
    const creates = edits.length === 1 && edits[0].old_string === '';
    const access = fileAccessFor(ctx, 'write');
    if (access) return editThroughEditor(access, edits, ctx, abs, shown);
    const real = await realTarget(abs);
    let file: Opened & { created?: boolean };
    try {
      file = creates ? await openForWrite(real, shown) : await openReal(real, 'update', shown);
    } catch (err) {
      if (err instanceof OpenError) return { content: err.kind === 'directory' ? err.message : `edit_file: ${err.message}`, isError: true };
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const hint = await missingPathHint(abs, (p) => displayPath(p, ctx.cwd));
      return { content: `File not found: ${shown}.${hint} To create a file, use write_file.`, isError: true };
    }
    const { handle, info } = file;
    try {
      if (file.created) {
        const bytes = encode(edits[0].new_string, 'utf8');
        await writeAll(handle, bytes);
        remember(ctx.session, abs, bytes, await handle.stat());
        const diff = await unifiedDiff(shown, '', edits[0].new_string);
        return { content: `Created ${shown}.\n${diff}`, display: { path: abs, diff, ...lineCounts(diff), created: true, ...textsForDisplay(undefined, edits[0].new_string) } };
      }
      if (info.size > MAX_TEXT_BYTES) {
        return { content: `edit_file: ${shown} is ${formatSize(info.size)}, larger than the ${formatSize(MAX_TEXT_BYTES)} edit_file changes; use bash (sed -i) for it.`, isError: true };
      }
      const raw = await readAll(handle, info.size);
      if (isBinary(raw)) return { content: `${shown} is a binary file; edit_file changes text files only.`, isError: true };
      const decoded = decode(raw);
      const lossy = lossyDecoding(raw, decoded);
      if (lossy) return { content: `edit_file: ${shown} was left as it is: ${lossy}, and rewriting it would change bytes outside the edit. Change it with bash (sed, iconv) instead.`, isError: true };
      const { text: before, encoding } = decoded;
      const eol = dominantEol(before);
      let text = before;
      let replacements = 0;
      for (const [i, e] of edits.entries()) {
        const label = edits.length > 1 ? `edits[${i}]` : 'edit_file';
        const applied = applyEdit(text, e, eol, label, shown);
        if ('error' in applied) {
          const note = edits.length > 1 ? ' No edit was applied.' : '';
          return { content: `${applied.error}${note}`, isError: true };
        }
        text = applied.text;
        replacements += applied.count;
      }
      const bytes = encode(text, encoding);
      try {
        await writeAll(handle, bytes, raw);
      } catch (err) {
        return { content: `edit_file: ${shown}: ${errorMessage(err)}.`, isError: true };
      }
      remember(ctx.session, abs, bytes, await handle.stat());
      const diff = await unifiedDiff(shown, before, text);
      const what = replacements === 1 ? '1 replacement' : `${replacements} replacements`;
      return { content: `Edited ${shown} (${what}).\n${diff}`, display: { path: abs, diff, ...lineCounts(diff), ...textsForDisplay(before, text) } };
    } finally {
      await handle.close();
    }
  },
});

/** edit_file through the editor (the `file-access` service): its text is edited, and written back through it. */
async function editThroughEditor(access: FileAccess, edits: Edit[], ctx: ToolContext, abs: string, shown: string): Promise<ToolResult> {
  let before: string | undefined;
  try {
    before = await currentText(ctx, access, abs);
  } catch (err) {
    return { content: `edit_file: ${shown}: the editor could not read it: ${errorMessage(err)}`, isError: true };
  }
  if (before === undefined && !(edits.length === 1 && edits[0].old_string === '')) {
    const hint = await missingPathHint(abs, (p) => displayPath(p, ctx.cwd));
    return { content: `File not found: ${shown}.${hint} To create a file, use write_file.`, isError: true };
  }
  const eol = dominantEol(before ?? '');
  let text = before ?? '';
  let replacements = 0;
  for (const [i, e] of edits.entries()) {
    const applied = applyEdit(text, e, eol, edits.length > 1 ? `edits[${i}]` : 'edit_file', shown);
    if ('error' in applied) return { content: `${applied.error}${edits.length > 1 ? ' No edit was applied.' : ''}`, isError: true };
    text = applied.text;
    replacements += applied.count;
  }
  try {
    await access.writeText(ctx.session, abs, text, ctx.signal);
  } catch (err) {
    return { content: `edit_file: ${shown}: the editor could not write it: ${errorMessage(err)}`, isError: true };
  }
  const bytes = Buffer.from(text, 'utf8');
  remember(ctx.session, abs, bytes, editorInfo(bytes));
  const diff = await unifiedDiff(shown, before ?? '', text);
  const display = { path: abs, diff, ...lineCounts(diff), ...textsForDisplay(before, text), ...(before === undefined ? { created: true } : {}) };
  if (before === undefined) return { content: `Created ${shown}.\n${diff}`, display };
  return { content: `Edited ${shown} (${replacements === 1 ? '1 replacement' : `${replacements} replacements`}).\n${diff}`, display };
}

const toCrlf = (s: string) => s.replace(/\r?\n/g, '\r\n');

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

function applyEdit(text: string, e: Edit, eol: '\n' | '\r\n', label: string, shown: string): { text: string; count: number } | { error: string } {
  if (e.old_string === e.new_string) return { error: `${label}: old_string and new_string are the same; nothing would change.` };
  if (e.old_string === '') {
    if (text === '') return { text: eol === '\r\n' ? toCrlf(e.new_string) : e.new_string, count: 1 };
    return { error: `${label}: old_string is empty, but ${shown} is not; quote the text to replace.` };
  }
  let oldText = e.old_string;
  let newText = eol === '\r\n' ? toCrlf(e.new_string) : e.new_string;
  let count = occurrences(text, oldText);
  // The model writes \n; a CRLF file stores \r\n. Match the file's form and write new text in it too.
  if (count === 0 && text.includes('\r\n') && /(^|[^\r])\n/.test(oldText)) {
    const crlf = toCrlf(oldText);
    const crlfCount = occurrences(text, crlf);
    if (crlfCount > 0) {
      oldText = crlf;
      newText = toCrlf(e.new_string);
      count = crlfCount;
    }
  }
  if (count === 0) return { error: `${label}: old_string matched 0 times in ${shown}.${zeroMatchHint(text, e.old_string)}` };
  if (count > 1 && !e.replace_all) {
    return { error: `${label}: old_string matched ${count} times in ${shown}; include more surrounding lines to make it unique, or set replace_all to change all ${count}.` };
  }
  if (e.replace_all) return { text: text.split(oldText).join(newText), count };
  const at = text.indexOf(oldText);
  return { text: text.slice(0, at) + newText + text.slice(at + oldText.length), count: 1 };
}

function zeroMatchHint(text: string, oldText: string): string {
  if (oldText.split('\n').some((line) => /^\s*\d+\t/.test(line))) {
    return " It looks like it includes read_file's line-number prefixes; quote only the file's text.";
  }
  const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
  if (squash(text).includes(squash(oldText))) return ' A match exists if whitespace is ignored: check indentation, tabs and trailing spaces against read_file.';
  return ' Read the file again and quote its text exactly.';
}
