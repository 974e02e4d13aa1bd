import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent, ToolResult } from '../../../kernel/index.js';
import toolDocuments from '../../../plugins/tool-documents/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, textOf, type Harness } from '../tools-fs/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** read_file the way the loop runs it: through toolExecute, where tool-documents answers for documents. */
async function read(hh: Harness, input: Record<string, unknown>): Promise<ToolResult> {
  const turn = { session: hh.session, kernel: hh.kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: (e: AgentEvent) => hh.kernel.emit(e) };
  const call = { id: 'c1', name: 'read_file', input };
  return (await hh.kernel.hooks.toolExecute.promise(call, turn)) ?? hh.run('read_file', input);
}

describe('read_file on documents', () => {
  it('refuses a PDF where the provider cannot take documents, naming it', async () => {
    h = await harness([toolsFs(), toolDocuments()], { config: { provider: 'openai' } });
    h.ws.write('a.pdf', '%PDF-1.4\n');
    const result = await read(h, { path: 'a.pdf' });
    expect(result).toMatchObject({ isError: true, content: 'read_file: the provider "openai" cannot take PDF documents; extract the text with bash instead (e.g. pdftotext a.pdf -).' });
  });

  it('names a broken PDF, a missing one, and a notebook that is not JSON or has no cells', async () => {
    h = await harness([toolsFs(), toolDocuments()]);
    h.ws.write('bad.pdf', 'not a pdf at all');
    expect(textOf(await read(h, { path: 'bad.pdf' }))).toMatch(/^read_file: bad\.pdf is not a readable PDF \(/);
    expect(await read(h, { path: 'gone.pdf' })).toMatchObject({ isError: true, content: 'File not found: gone.pdf.' });
    h.ws.write('broken.ipynb', '{"cells": [');
    expect(textOf(await read(h, { path: 'broken.ipynb' }))).toMatch(/^read_file: broken\.ipynb is not valid JSON/);
    h.ws.write('plain.ipynb', '{"nothing": 1}');
    expect(textOf(await read(h, { path: 'plain.ipynb' }))).toBe('read_file: plain.ipynb is not a Jupyter notebook (no cells list)');
    h.ws.write('notes.txt', 'hello\n');
    expect(textOf(await read(h, { path: 'notes.txt' }))).toBe('     1\thello');
  });
});

describe('notebook_edit', () => {
  const nb = { cells: [{ cell_type: 'markdown', metadata: {}, source: ['a'] }], metadata: {}, nbformat: 4, nbformat_minor: 4 };

  it('names each bad request and leaves the file untouched', async () => {
    h = await harness([toolsFs(), toolDocuments()]);
    const file = h.ws.write('n.ipynb', JSON.stringify(nb));
    const before = readFileSync(file, 'utf8');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ path: 'n.txt', cell_number: 1, new_source: 'x' }, 'notebook_edit: n.txt is not a .ipynb notebook; use edit_file for other files.'],
      [{ path: 'n.ipynb', cell_id: 'x', cell_number: 1, new_source: 'x' }, 'notebook_edit: give cell_id or cell_number, not both.'],
      [{ path: 'n.ipynb', cell_id: 'zzz', new_source: 'x' }, 'notebook_edit: no cell with id "zzz" in n.ipynb (ids: -).'],
      [{ path: 'n.ipynb', new_source: 'x' }, 'notebook_edit: name the cell to replace with cell_id or cell_number.'],
      [{ path: 'n.ipynb', edit_mode: 'insert', new_source: 'x' }, 'notebook_edit: cell_type (code or markdown) is required to insert a cell.'],
      [{ path: 'n.ipynb', cell_number: 1 }, 'notebook_edit: new_source is required to replace a cell.'],
      [{ path: 'missing.ipynb', cell_number: 1, new_source: 'x' }, 'notebook_edit: cannot read missing.ipynb (ENOENT).'],
    ];
    for (const [input, message] of cases) expect(await h.run('notebook_edit', input)).toEqual({ content: message, isError: true });
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('refuses a notebook that is not valid UTF-8 or whose cells are not objects, for edits and reads, leaving it untouched', async () => {
    h = await harness([toolsFs(), toolDocuments()]);
    const latin1 = Buffer.from(JSON.stringify({ ...nb, metadata: { author: 'Andr\xe9' } }), 'latin1');
    const file = h.ws.write('l.ipynb', '');
    writeFileSync(file, latin1);
    expect(await h.run('notebook_edit', { path: 'l.ipynb', cell_number: 1, new_source: 'x' })).toEqual({ content: 'notebook_edit: l.ipynb is not valid UTF-8 text; it was left as it is.', isError: true });
    expect(readFileSync(file).equals(latin1)).toBe(true);
    for (const cells of [[null], [1], [['a']], [{ source: 'no type' }]]) {
      const odd = h.ws.write('odd.ipynb', JSON.stringify({ ...nb, cells }));
      const before = readFileSync(odd, 'utf8');
      const message = 'odd.ipynb is not a Jupyter notebook (cell 1 is not an object with a cell_type)';
      expect(await h.run('notebook_edit', { path: 'odd.ipynb', cell_number: 1, new_source: 'x' })).toEqual({ content: `notebook_edit: ${message}`, isError: true });
      expect(textOf(await read(h, { path: 'odd.ipynb' }))).toBe(`read_file: ${message}`);
      expect(readFileSync(odd, 'utf8')).toBe(before);
    }
  });

  it('inserts at the top without ids in an nbformat 4.4 notebook, and turns a code cell into markdown', async () => {
    h = await harness([toolsFs(), toolDocuments()]);
    const file = h.ws.write('n.ipynb', JSON.stringify(nb, null, 2));
    expect(textOf(await h.run('notebook_edit', { path: 'n.ipynb', edit_mode: 'insert', cell_type: 'code', new_source: 'x = 1' }))).toBe('Inserted a code cell as cell 1 in n.ipynb; it now has 2 cells.');
    expect(textOf(await h.run('notebook_edit', { path: 'n.ipynb', cell_number: 1, cell_type: 'markdown', new_source: '*x*' }))).toBe('Replaced the source of cell 1 in n.ipynb; it now has 2 cells.');
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^\{\n {2}"cells"/);
    expect(JSON.parse(text).cells).toEqual([{ cell_type: 'markdown', metadata: {}, source: ['*x*'] }, nb.cells[0]]);
  });
});
