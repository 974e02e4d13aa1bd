/** notebook_edit's work: one cell of a Jupyter notebook replaced, inserted or deleted; the file stays valid JSON. */
import path from 'node:path';
import type { ToolContext, ToolResult } from '../../kernel/index.js';
import { MAX_NOTEBOOK_BYTES } from './limits.js';
import type { NotebookEditInput } from './notebook-edit.js';
import { indentOf, newCellId, parseNotebook, toSource, type Cell } from './notebook.js';
import { formatBytes, NO_SAFE_FILES, openRefusal, resolveArg, safeFiles, type SafeFilesLike } from './open-document.js';

/**
 * The notebook is read and rewritten through one handle of the safe open, so the edit lands in the file that was
 * read. Its own name is never followed as a symbolic link (only the folders above it are resolved): a link swapped
 * in after the permission check is refused, not written through.
 */
export async function editCell(args: NotebookEditInput, ctx: ToolContext): Promise<ToolResult> {
  const abs = resolveArg(args.path, ctx.cwd);
  const shown = path.relative(ctx.cwd, abs) || abs;
  if (path.extname(abs).toLowerCase() !== '.ipynb') return { content: `notebook_edit: ${shown} is not a .ipynb notebook; use edit_file for other files.`, isError: true };
  const files = safeFiles(ctx.kernel);
  if (!files) return { content: `notebook_edit: ${NO_SAFE_FILES}.`, isError: true };
  let opened;
  try {
    const real = path.join(await files.realTarget(path.dirname(abs)), path.basename(abs));
    opened = await files.open(real, 'update', shown);
  } catch (err) {
    const refusal = openRefusal(err);
    if (refusal?.kind === 'symlink') return { content: `notebook_edit: ${shown} is a symbolic link; notebook_edit does not write through links: edit the file it points to by its own path.`, isError: true };
    if (refusal) return { content: `notebook_edit: ${refusal.message}`, isError: true };
    return { content: `notebook_edit: cannot read ${shown} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`, isError: true };
  }
  try {
    return await editOpened(args, files, opened, shown, abs);
  } finally {
    await opened.handle.close();
  }
}

async function editOpened(args: NotebookEditInput, files: SafeFilesLike, opened: Awaited<ReturnType<SafeFilesLike['open']>>, shown: string, abs: string): Promise<ToolResult> {
  const { handle, info } = opened;
  if (info.size > MAX_NOTEBOOK_BYTES) return { content: `notebook_edit: ${shown} is ${formatBytes(info.size)}, more than the ${formatBytes(MAX_NOTEBOOK_BYTES)} notebook_edit edits.`, isError: true };
  const raw = await files.readAll(handle, info.size);
  if (raw.length > MAX_NOTEBOOK_BYTES) return { content: `notebook_edit: ${shown} grew past ${formatBytes(MAX_NOTEBOOK_BYTES)} while it was read; nothing was changed.`, isError: true };
  const text = raw.toString('utf8');
  // Bytes that are not UTF-8 decode to U+FFFD; writing the notebook back would change every one of them.
  if (!Buffer.from(text, 'utf8').equals(raw)) return { content: `notebook_edit: ${shown} is not valid UTF-8 text; it was left as it is.`, isError: true };
  const mode = args.edit_mode ?? 'replace';
  let nb;
  try {
    nb = parseNotebook(text, shown);
  } catch (err) {
    return { content: `notebook_edit: ${(err as Error).message}`, isError: true };
  }
  if (args.cell_id !== undefined && args.cell_number !== undefined) return { content: 'notebook_edit: give cell_id or cell_number, not both.', isError: true };
  let at = -1;
  if (args.cell_id !== undefined) {
    at = nb.cells.findIndex((c) => c.id === args.cell_id);
    if (at === -1) return { content: `notebook_edit: no cell with id "${args.cell_id}" in ${shown} (ids: ${nb.cells.map((c) => c.id ?? '-').join(', ')}).`, isError: true };
  } else if (args.cell_number !== undefined) {
    if (args.cell_number > nb.cells.length) return { content: `notebook_edit: cell_number ${args.cell_number} is past the last cell (${shown} has ${nb.cells.length}).`, isError: true };
    at = args.cell_number - 1;
  } else if (mode !== 'insert') {
    return { content: `notebook_edit: name the cell to ${mode} with cell_id or cell_number.`, isError: true };
  }
  let summary: string;
  if (mode === 'delete') {
    nb.cells.splice(at, 1);
    summary = `Deleted cell ${at + 1}`;
  } else if (mode === 'insert') {
    if (args.new_source === undefined) return { content: 'notebook_edit: new_source is required to insert a cell.', isError: true };
    if (!args.cell_type) return { content: 'notebook_edit: cell_type (code or markdown) is required to insert a cell.', isError: true };
    const cell: Cell = { cell_type: args.cell_type, metadata: {}, source: toSource(args.new_source) };
    const id = newCellId(nb);
    if (id) cell.id = id;
    if (args.cell_type === 'code') Object.assign(cell, { execution_count: null, outputs: [] });
    nb.cells.splice(at + 1, 0, cell);
    summary = `Inserted a ${args.cell_type} cell as cell ${at + 2}${id ? ` (id=${id})` : ''}`;
  } else {
    if (args.new_source === undefined) return { content: 'notebook_edit: new_source is required to replace a cell.', isError: true };
    const cell = nb.cells[at]!;
    cell.source = toSource(args.new_source);
    if (args.cell_type && args.cell_type !== cell.cell_type) {
      cell.cell_type = args.cell_type;
      if (args.cell_type === 'markdown') {
        delete cell.outputs;
        delete cell.execution_count;
      }
    }
    if (cell.cell_type === 'code') Object.assign(cell, { execution_count: null, outputs: [] });
    summary = `Replaced the source of cell ${at + 1}`;
  }
  try {
    await files.writeAll(handle, Buffer.from(`${JSON.stringify(nb, null, indentOf(text))}\n`, 'utf8'), raw);
  } catch (err) {
    return { content: `notebook_edit: ${shown}: ${(err as Error).message}.`, isError: true };
  }
  return { content: `${summary} in ${shown}; it now has ${nb.cells.length} cells.`, display: { path: abs } };
}
