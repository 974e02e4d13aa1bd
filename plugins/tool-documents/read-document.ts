/** read_file on a PDF (a document block) or a Jupyter notebook (its cells and outputs). */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Kernel, ToolResult, Turn } from '../../kernel/index.js';
import { parseNotebook, renderNotebook } from './notebook.js';
import { readPdf } from './pdf.js';

/** read_file's input, as this plugin reads it. */
export interface ReadInput {
  path: string;
  offset?: number;
  limit?: number;
}

/** Providers that take `document` blocks. */
const DOCUMENT_PROVIDERS = new Set(['anthropic']);

export async function readDocument(kernel: Kernel, args: ReadInput, turn: Turn, ext: string): Promise<ToolResult> {
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
