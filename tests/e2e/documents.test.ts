import { readFileSync, writeFileSync } from 'node:fs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { runKeel } from '../helpers/cli.js';

const prepare = useScriptedProjects();

/** A PDF of `pages` pages, each saying "Page N", made here with pdf-lib. */
async function makePdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) doc.addPage([300, 200]).drawText(`Page ${i} of the spec`, { x: 20, y: 100, size: 14, font });
  return Buffer.from(await doc.save());
}

type Block = { type: string; text?: string; source?: { type: string; media_type: string; data: string } };
function lastResult(request: RecordedRequest): { content: Block[] | string; is_error?: boolean } {
  const messages = request.body.messages as Array<{ content: Array<{ type: string; content: Block[] | string; is_error?: boolean }> }>;
  return messages[messages.length - 1].content.find((b) => b.type === 'tool_result')!;
}

describe('documents through the CLI', () => {
  it('sends a PDF the test made as a document block, whole when short', async () => {
    const { env, ws, server } = await prepare([callTool('read_file', { path: 'spec.pdf' }), say('read it')]);
    const pdf = await makePdf(3);
    writeFileSync(ws.path('spec.pdf'), pdf);
    const run = await runKeel(['-p', 'read spec.pdf'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = lastResult(server.messageRequests()[1]);
    expect(result.is_error).toBeUndefined();
    const blocks = result.content as Block[];
    expect(blocks[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^PDF spec\.pdf \(3 pages, \d+ KB\)$/) });
    expect(blocks[1]).toMatchObject({ type: 'document', source: { type: 'base64', media_type: 'application/pdf' } });
    expect(Buffer.from(blocks[1].source!.data, 'base64').equals(pdf)).toBe(true);
    const tools = server.messageRequests()[0].body.tools as Array<{ name: string; description: string }>;
    expect(tools.find((t) => t.name === 'read_file')!.description).toContain('PDFs come back as documents');
  });

  it('sends a long PDF a page range at a time: offset and limit count pages', async () => {
    const { env, ws, server } = await prepare([callTool('read_file', { path: 'long.pdf' }), callTool('read_file', { path: 'long.pdf', offset: 21, limit: 3 }), callTool('read_file', { path: 'long.pdf', offset: 40 }), say('ok')]);
    writeFileSync(ws.path('long.pdf'), await makePdf(25));
    const run = await runKeel(['-p', 'read long.pdf'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const requests = server.messageRequests();
    const first = lastResult(requests[1]).content as Block[];
    expect(first[0].text).toBe('PDF long.pdf: pages 1-20 of 25. Pages 21-25 not sent: call read_file with offset=21 (pages) to read on.');
    expect((await PDFDocument.load(Buffer.from(first[1].source!.data, 'base64'))).getPageCount()).toBe(20);
    const second = lastResult(requests[2]).content as Block[];
    expect(second[0].text).toBe('PDF long.pdf: pages 21-23 of 25. Pages 24-25 not sent: call read_file with offset=24 (pages) to read on.');
    expect((await PDFDocument.load(Buffer.from(second[1].source!.data, 'base64'))).getPageCount()).toBe(3);
    expect(lastResult(requests[3])).toMatchObject({ is_error: true, content: 'read_file: long.pdf has 25 pages; offset 40 is past the end.' });
  });

  it('reads a notebook as cells with outputs, and notebook_edit keeps it valid JSON', async () => {
    const notebook = {
      cells: [
        { cell_type: 'markdown', id: 'intro', metadata: {}, source: ['# Demo\n', 'Some text'] },
        {
          cell_type: 'code',
          id: 'calc',
          metadata: {},
          execution_count: 3,
          source: ['print(1 + 1)'],
          outputs: [
            { output_type: 'stream', name: 'stdout', text: ['2\n'] },
            { output_type: 'display_data', data: { 'image/png': 'iVBORw0KGgo=', 'text/plain': ['<Figure>'] }, metadata: {} },
          ],
        },
      ],
      metadata: { kernelspec: { name: 'python3', language: 'python' } },
      nbformat: 4,
      nbformat_minor: 5,
    };
    const { env, ws, server } = await prepare([
      callTool('read_file', { path: 'demo.ipynb' }),
      callTool('notebook_edit', { path: 'demo.ipynb', cell_id: 'calc', new_source: 'print(2 + 2)' }),
      callTool('notebook_edit', { path: 'demo.ipynb', cell_number: 1, edit_mode: 'insert', cell_type: 'code', new_source: 'import os\nprint(os.getcwd())\n' }),
      callTool('notebook_edit', { path: 'demo.ipynb', cell_id: 'intro', edit_mode: 'delete' }),
      callTool('notebook_edit', { path: 'demo.ipynb', cell_number: 9, new_source: 'x' }),
      say('edited'),
    ]);
    ws.write('demo.ipynb', JSON.stringify(notebook, null, 1));
    const run = await runKeel(['-p', 'edit the notebook', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const requests = server.messageRequests();
    const read = lastResult(requests[1]).content as Block[];
    const shown = read.filter((b) => b.type === 'text').map((b) => b.text).join('');
    expect(shown).toContain('--- cell 1 (markdown) id=intro ---\n# Demo\nSome text');
    expect(shown).toContain('--- cell 2 (code) id=calc [3] ---\nprint(1 + 1)\n--- outputs ---\n2\n');
    expect(shown).toContain('<Figure>');
    expect(read.some((b) => b.type === 'image' && b.source?.media_type === 'image/png')).toBe(true);
    expect((requests[1].body.tools as Array<{ name: string }>).map((t) => t.name)).toContain('notebook_edit');
    expect(lastResult(requests[5])).toMatchObject({ is_error: true, content: expect.stringContaining('cell_number 9 is past the last cell') });

    const after = JSON.parse(readFileSync(ws.path('demo.ipynb'), 'utf8'));
    expect(after.cells.map((c: { id: string }) => c.id)).toEqual([expect.stringMatching(/^[0-9a-f]{8}$/), 'calc']);
    expect(after.cells[0]).toMatchObject({ cell_type: 'code', source: ['import os\n', 'print(os.getcwd())\n'], outputs: [], execution_count: null });
    expect(after.cells[1]).toMatchObject({ source: ['print(2 + 2)'], outputs: [], execution_count: null });
    expect(after.nbformat).toBe(4);
    expect(readFileSync(ws.path('demo.ipynb'), 'utf8')).toMatch(/^\{\n "cells"/);
  });
});
