/** notebook_edit: replace, insert or delete one cell of a Jupyter notebook; the file stays valid JSON. */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type MessageParam, type ToolResult } from '../../kernel/index.js';
import { indentOf, newCellId, parseNotebook, toSource, type Cell } from './notebook.js';

const input = z.object({
  path: z.string().min(1).describe('The .ipynb file'),
  cell_id: z.string().optional().describe('The id of the cell to change (as read_file shows it)'),
  cell_number: z.number().int().min(1).optional().describe('Or its number, 1-based (as read_file shows it)'),
  new_source: z.string().optional().describe('The new source of the cell (replace, insert)'),
  cell_type: z.enum(['code', 'markdown']).optional().describe('The type of the cell (required to insert)'),
  edit_mode: z.enum(['replace', 'insert', 'delete']).optional().describe('replace (default); insert adds a cell after the one named (at the top when none is named); delete removes it'),
});

const touchesNotebook = (m: MessageParam) => typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_use' && JSON.stringify(b.input).includes('.ipynb'));

/** How far a history was scanned: asked every turn, so only the messages appended since are looked at. */
const scans = new WeakMap<MessageParam[], { scanned: number; last: MessageParam | undefined; found: boolean }>();

/** True once a tool call in the history names a .ipynb file. A history rewritten in place is scanned again. */
function mentionsNotebook(messages: MessageParam[]): boolean {
  let scan = scans.get(messages);
  if (!scan || scan.scanned > messages.length || messages[scan.scanned - 1] !== scan.last) scan = { scanned: 0, last: undefined, found: false };
  if (!scan.found) {
    for (let i = scan.scanned; i < messages.length; i++) {
      if (touchesNotebook(messages[i])) {
        scan.found = true;
        break;
      }
    }
  }
  scan.scanned = messages.length;
  scan.last = messages[messages.length - 1];
  scans.set(messages, scan);
  return scan.found;
}

export const notebookEditTool = defineTool({
  name: 'notebook_edit',
  description:
    'Edit a Jupyter notebook (.ipynb) cell: replace its source, insert a new cell after it (or at the top), or delete it. Name the cell by cell_id or cell_number as read_file shows them. Replacing a code cell clears its outputs.',
  permission: 'write',
  input,
  deferLoading: true,
  loadWhen: ({ session }) => mentionsNotebook(session.messages),
  paths: (i) => [i.path],
  async execute(args, ctx): Promise<ToolResult> {
    const abs = path.resolve(ctx.cwd, args.path);
    const shown = path.relative(ctx.cwd, abs) || abs;
    if (path.extname(abs).toLowerCase() !== '.ipynb') return { content: `notebook_edit: ${shown} is not a .ipynb notebook; use edit_file for other files.`, isError: true };
    const mode = args.edit_mode ?? 'replace';
    let text: string;
    try {
      text = await readFile(abs, 'utf8');
    } catch (err) {
      return { content: `notebook_edit: cannot read ${shown} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`, isError: true };
    }
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
    await writeFile(abs, `${JSON.stringify(nb, null, indentOf(text))}\n`);
    return { content: `${summary} in ${shown}; it now has ${nb.cells.length} cells.`, display: { path: abs } };
  },
});
