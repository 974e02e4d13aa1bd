/** read_file on a PDF (a document block) or a Jupyter notebook (its cells and outputs). */
import path from 'node:path';
import type { Kernel, ToolResult, Turn } from '../../kernel/index.js';
import { MAX_NOTEBOOK_BYTES, MAX_PDF_FILE_BYTES } from './limits.js';
import { parseNotebook, renderNotebook } from './notebook.js';
import { formatBytes, NO_SAFE_FILES, openRefusal, resolveArg, safeFiles } from './open-document.js';
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
  const abs = resolveArg(args.path, turn.session.cwd);
  const shown = path.relative(turn.session.cwd, abs) || abs;
  const files = safeFiles(kernel);
  if (!files) return { content: `read_file: ${NO_SAFE_FILES}.`, isError: true };
  if (ext === '.pdf') {
    const provider = kernel.config.provider ?? 'anthropic';
    if (!DOCUMENT_PROVIDERS.has(provider)) {
      return { content: `read_file: the provider "${provider}" cannot take PDF documents; extract the text with bash instead (e.g. pdftotext ${shown} -).`, isError: true };
    }
  }
  const limit = ext === '.pdf' ? MAX_PDF_FILE_BYTES : MAX_NOTEBOOK_BYTES;
  let bytes: Buffer;
  try {
    const { handle, info } = await files.open(await files.realTarget(abs), 'read', shown);
    try {
      if (info.size > limit) {
        return { content: `read_file: ${shown} is ${formatBytes(info.size)}, more than the ${formatBytes(limit)} read_file reads of a ${ext === '.pdf' ? 'PDF' : 'notebook'}; split it, or extract what you need with bash.`, isError: true };
      }
      bytes = await files.readAll(handle, info.size);
    } finally {
      await handle.close();
    }
  } catch (err) {
    const refusal = openRefusal(err);
    if (refusal?.kind === 'directory') return { content: `${shown} is a directory; use ls to list it.`, isError: true };
    if (refusal) return { content: `read_file: ${refusal.message}`, isError: true };
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { content: `File not found: ${shown}.`, isError: true };
    throw err;
  }
  // A file that grew past the bound between the size check and the read.
  if (bytes.length > limit) return { content: `read_file: ${shown} grew past ${formatBytes(limit)} while it was read; read it again once it is written.`, isError: true };
  if (ext === '.pdf') return readPdf(bytes, shown, { offset: args.offset, limit: args.limit });
  try {
    const nb = parseNotebook(bytes.toString('utf8'), shown);
    return { content: renderNotebook(nb, shown), display: { path: abs, cells: nb.cells.length } };
  } catch (err) {
    return { content: `read_file: ${(err as Error).message}`, isError: true };
  }
}
