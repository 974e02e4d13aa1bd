/** notebook_edit: replace, insert or delete one cell of a Jupyter notebook; the file stays valid JSON (edit-cell.ts). */
import { z } from 'zod';
import { defineTool, type MessageParam, type ToolResult } from '../../kernel/index.js';

const input = z.object({
  path: z.string().min(1).describe('The .ipynb file'),
  cell_id: z.string().optional().describe('The id of the cell to change (as read_file shows it)'),
  cell_number: z.number().int().min(1).optional().describe('Or its number, 1-based (as read_file shows it)'),
  new_source: z.string().optional().describe('The new source of the cell (replace, insert)'),
  cell_type: z.enum(['code', 'markdown']).optional().describe('The type of the cell (required to insert)'),
  edit_mode: z.enum(['replace', 'insert', 'delete']).optional().describe('replace (default); insert adds a cell after the one named (at the top when none is named); delete removes it'),
});

/** notebook_edit's input. */
export type NotebookEditInput = z.infer<typeof input>;

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
    const { editCell } = await import('./cold.js');
    return editCell(args, ctx);

  },
});
