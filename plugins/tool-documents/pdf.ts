/** PDFs for read_file: sent to the model as a document block, a page range at a time when large. */
import type { DocumentBlockParam, TextBlockParam, ToolResult } from '../../kernel/index.js';
import { installInflateBudget, INFLATE_LIMITS, withInflateBudget } from './inflate-budget.js';
import { MAX_PAGES } from './limits.js';
/** The Messages API takes requests up to 32 MB; a document's base64 grows by a third. */
export const MAX_PDF_BYTES = 20 * 1024 * 1024;

const size = (bytes: number) => (bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`);

type PdfLib = typeof import('pdf-lib');

/** pdf-lib, loaded on the first PDF, with its decompression bounded; bundled, its CommonJS build arrives under `default`. */
async function loadPdfLib(): Promise<PdfLib | undefined> {
  const mod = (await import('pdf-lib')) as PdfLib & { default?: PdfLib };
  const lib = mod.PDFDocument ? mod : mod.default!;
  return installInflateBudget(lib) ? lib : undefined;
}

export async function readPdf(bytes: Buffer, shown: string, range: { offset?: number; limit?: number }): Promise<ToolResult> {
  const lib = await loadPdfLib();
  if (!lib) return { content: `read_file: cannot read ${shown}: this build's pdf-lib cannot be held to a decompression bound, so PDFs are not read.`, isError: true };
  const outcome = await withInflateBudget(() => sendPdf(lib.PDFDocument, bytes, shown, range)).catch((err: unknown) => ({ failed: err as Error }));
  if ('failed' in outcome) return { content: `read_file: ${shown} is not a readable PDF (${outcome.failed.message}).`, isError: true };
  if ('exceeded' in outcome) {
    return {
      content: `read_file: refused ${shown}: ${outcome.exceeded} (bounds: ${INFLATE_LIMITS.perStream / 1024 / 1024} MB per stream, ${INFLATE_LIMITS.total / 1024 / 1024} MB per read), like a decompression bomb; extract what you need with bash (e.g. pdftotext) if you trust it.`,
      isError: true,
    };
  }
  return outcome.value;
}

async function sendPdf(PDFDocument: PdfLib['PDFDocument'], bytes: Buffer, shown: string, range: { offset?: number; limit?: number }): Promise<ToolResult> {
  let doc;
  try {
    doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: false });
  } catch (err) {
    if ((err as Error).name === 'InflateLimitError') throw err;
    return { content: `read_file: ${shown} is not a readable PDF (${(err as Error).message}).`, isError: true };
  }
  const pages = doc.getPageCount();
  const whole = range.offset === undefined && range.limit === undefined && pages <= MAX_PAGES && bytes.length <= MAX_PDF_BYTES;
  let data = bytes;
  let first = 1;
  let last = pages;
  if (!whole) {
    first = range.offset ?? 1;
    if (first > pages) return { content: `read_file: ${shown} has ${pages} pages; offset ${first} is past the end.`, isError: true };
    last = Math.min(pages, first - 1 + Math.min(range.limit ?? MAX_PAGES, MAX_PAGES));
    const part = await PDFDocument.create();
    const copied = await part.copyPages(doc, Array.from({ length: last - first + 1 }, (_, i) => first - 1 + i));
    for (const page of copied) part.addPage(page);
    data = Buffer.from(await part.save());
    if (data.length > MAX_PDF_BYTES) {
      return { content: `read_file: pages ${first}-${last} of ${shown} take ${size(data.length)}, more than the ${size(MAX_PDF_BYTES)} one read sends; read fewer pages (limit).`, isError: true };
    }
  }
  const more = last < pages ? ` Pages ${last + 1}-${pages} not sent: call read_file with offset=${last + 1} (pages) to read on.` : '';
  const header: TextBlockParam = {
    type: 'text',
    text: whole ? `PDF ${shown} (${pages} page${pages === 1 ? '' : 's'}, ${size(bytes.length)})` : `PDF ${shown}: pages ${first}-${last} of ${pages}.${more}`,
  };
  const document: DocumentBlockParam = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data.toString('base64') } };
  return { content: [header, document], display: { path: shown, pages, first, last } };
}
