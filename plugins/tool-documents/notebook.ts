/** Jupyter notebooks (.ipynb, nbformat 4): read as cells with their outputs; edited cell by cell. */
import { randomBytes } from 'node:crypto';
import type { ImageBlockParam, TextBlockParam } from '../../kernel/index.js';

export interface Cell {
  cell_type: 'code' | 'markdown' | 'raw';
  id?: string;
  source: string | string[];
  metadata?: Record<string, unknown>;
  outputs?: Output[];
  execution_count?: number | null;
}

interface Output {
  output_type: 'stream' | 'execute_result' | 'display_data' | 'error';
  name?: string;
  text?: string | string[];
  data?: Record<string, string | string[]>;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

export interface Notebook {
  cells: Cell[];
  metadata?: { kernelspec?: { language?: string; name?: string }; language_info?: { name?: string } };
  nbformat?: number;
  nbformat_minor?: number;
  [key: string]: unknown;
}

/** Characters of one cell output shown at most. */
const MAX_OUTPUT = 4000;
/** Images from outputs sent at most per read. */
const MAX_IMAGES = 8;

const join = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join('') : (value ?? ''));
const ANSI = /\x1b\[[0-9;]*m/g;

export function parseNotebook(text: string, shown: string): Notebook {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${shown} is not valid JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as Notebook).cells)) throw new Error(`${shown} is not a Jupyter notebook (no cells list)`);
  const bad = (parsed as { cells: unknown[] }).cells.findIndex(
    (c) => typeof c !== 'object' || c === null || Array.isArray(c) || typeof (c as { cell_type?: unknown }).cell_type !== 'string',
  );
  if (bad !== -1) throw new Error(`${shown} is not a Jupyter notebook (cell ${bad + 1} is not an object with a cell_type)`);
  return parsed as Notebook;
}

export function language(nb: Notebook): string {
  return nb.metadata?.language_info?.name ?? nb.metadata?.kernelspec?.language ?? 'python';
}

function cut(text: string): string {
  return text.length > MAX_OUTPUT ? `${text.slice(0, MAX_OUTPUT)}\n[… ${text.length - MAX_OUTPUT} more characters of this output]` : text;
}

/** The notebook as text blocks (one per cell) with output images in between. */
export function renderNotebook(nb: Notebook, shown: string): Array<TextBlockParam | ImageBlockParam> {
  const lang = language(nb);
  const blocks: Array<TextBlockParam | ImageBlockParam> = [];
  let images = 0;
  let text = `Notebook ${shown} (${lang}, ${nb.cells.length} cell${nb.cells.length === 1 ? '' : 's'}; cell numbers and ids are what notebook_edit takes)\n`;
  nb.cells.forEach((cell, i) => {
    const id = cell.id ? ` id=${cell.id}` : '';
    const run = cell.cell_type === 'code' && typeof cell.execution_count === 'number' ? ` [${cell.execution_count}]` : '';
    text += `\n--- cell ${i + 1} (${cell.cell_type})${id}${run} ---\n${join(cell.source)}\n`;
    const outputs = cell.outputs ?? [];
    if (outputs.length === 0) return;
    text += '--- outputs ---\n';
    for (const output of outputs) {
      if (output.output_type === 'stream') text += cut(join(output.text));
      else if (output.output_type === 'error') text += cut(`${output.ename}: ${output.evalue}\n${(output.traceback ?? []).join('\n').replace(ANSI, '')}`);
      else {
        const data = output.data ?? {};
        const png = data['image/png'] ?? data['image/jpeg'];
        if (png && images < MAX_IMAGES) {
          images++;
          blocks.push({ type: 'text', text });
          text = '';
          blocks.push({ type: 'image', source: { type: 'base64', media_type: data['image/png'] ? 'image/png' : 'image/jpeg', data: join(png).replace(/\s/g, '') } });
        } else if (png) text += '[image output not sent: too many images in one read]';
        if (data['text/plain'] !== undefined) text += cut(join(data['text/plain']));
        else if (!png) text += `[output of type ${Object.keys(data).join(', ') || 'none'}]`;
      }
      if (!text.endsWith('\n')) text += '\n';
    }
  });
  blocks.push({ type: 'text', text });
  return blocks.filter((b) => b.type !== 'text' || b.text.length > 0);
}

/** Jupyter's source form: a list of lines, each keeping its newline. */
export function toSource(text: string): string[] {
  return text.split(/(?<=\n)/).filter((line) => line.length > 0);
}

export function newCellId(nb: Notebook): string | undefined {
  const wantsIds = (nb.nbformat ?? 4) > 4 || (nb.nbformat === 4 && (nb.nbformat_minor ?? 0) >= 5) || nb.cells.some((c) => c.id);
  return wantsIds ? randomBytes(4).toString('hex') : undefined;
}

/** The indentation the file uses (Jupyter writes 1 space), so a rewrite keeps its diff small. */
export function indentOf(text: string): number {
  const match = /\n( +)"/.exec(text);
  return match ? match[1]!.length : 1;
}
