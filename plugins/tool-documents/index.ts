/**
 * tool-documents: read_file on a PDF sends a document block (a page range at a time when large), read_file on
 * a Jupyter notebook shows its cells and outputs, and notebook_edit changes one cell. Reading and editing
 * documents is loaded on the first call that reads or edits one.
 */
import path from 'node:path';
import { definePlugin, type ToolDefinition } from '../../kernel/index.js';
import { MAX_PAGES } from './limits.js';
import { notebookEditTool } from './notebook-edit.js';
import type { ReadInput } from './read-document.js';

const NAME = 'tool-documents';

const NOTE = ` PDFs come back as documents (at most ${MAX_PAGES} pages per call: for PDFs, offset and limit count pages). Jupyter notebooks (.ipynb) come back as cells with their outputs; change them with notebook_edit.`;

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
      const { readDocument } = await import('./cold.js');
      return readDocument(kernel, args, turn, ext);
    });
  },
}));
