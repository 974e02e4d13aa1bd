/**
 * tool-documents: read_file on a PDF sends a document block (a page range at a time when large), read_file on
 * a Jupyter notebook shows its cells and outputs, and notebook_edit changes one cell.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, type Kernel, type ToolDefinition, type ToolResult, type Turn } from '../../kernel/index.js';
import { renderNotebook, parseNotebook } from './notebook.js';
import { notebookEditTool } from './notebook-edit.js';
import { MAX_PAGES, readPdf } from './pdf.js';

const NAME = 'tool-documents';

/** Providers that take `document` blocks. */
const DOCUMENT_PROVIDERS = new Set(['anthropic']);

const NOTE = ` PDFs come back as documents (at most ${MAX_PAGES} pages per call: for PDFs, offset and limit count pages). Jupyter notebooks (.ipynb) come back as cells with their outputs; change them with notebook_edit.`;

interface ReadInput {
  path: string;
  offset?: number;
  limit?: number;
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.tools.register(notebookEditTool);

    // The model learns what read_file does with documents only while this plugin is on.
    const described = new WeakMap<ToolDefinition, ToolDefinition>();
    kernel.hooks.selectTools.tapPromise(NAME, async (tools) =>
      tools.map((tool) => {
        if (tool.name !== 'read_file') return tool;
        let wrapped = described.get(tool);
        if (!wrapped) {
          wrapped = { ...tool, description: tool.description + NOTE };
          described.set(tool, wrapped);
        }
        return wrapped;
      }),
    );

    kernel.hooks.toolExecute.tapPromise(NAME, async (call, turn) => {
      if (call.name !== 'read_file') return undefined;
      const args = call.input as ReadInput;
      const ext = path.extname(args.path ?? '').toLowerCase();
      if (ext !== '.pdf' && ext !== '.ipynb') return undefined;
      return readDocument(kernel, args, turn, ext);
    });
  },
}));

async function readDocument(kernel: Kernel, args: ReadInput, turn: Turn, ext: string): Promise<ToolResult> {
  const abs = path.resolve(turn.session.cwd, args.path);
  const shown = path.relative(turn.session.cwd, abs) || abs;
  let info;
  try {
    info = await stat(abs);
  } catch {
    return { content: `File not found: ${shown}.`, isError: true };
  }
  if (info.isDirectory()) return { content: `${shown} is a directory; use ls to list it.`, isError: true };
  if (ext === '.pdf') {
    const provider = kernel.config.provider ?? 'anthropic';
    if (!DOCUMENT_PROVIDERS.has(provider)) {
      return { content: `read_file: the provider "${provider}" cannot take PDF documents; extract the text with bash instead (e.g. pdftotext ${shown} -).`, isError: true };
    }
    return readPdf(await readFile(abs), shown, { offset: args.offset, limit: args.limit });
  }
  try {
    const nb = parseNotebook(await readFile(abs, 'utf8'), shown);
    return { content: renderNotebook(nb, shown), display: { path: abs, cells: nb.cells.length } };
  } catch (err) {
    return { content: `read_file: ${(err as Error).message}`, isError: true };
  }
}
