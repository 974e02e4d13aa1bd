import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKernel, defaultConfig, defaultTools, startSession, toApiTool } from '../../../kernel/index.js';
import { loadPreset } from '../../../presets/index.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(() => ws.cleanup());

const BUILTIN = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep', 'ls', 'web_fetch', 'todo_write', 'tool_search'];

describe('the default tools array', () => {
  for (const name of ['default', 'headless']) {
    it(`of the ${name} preset is at most 15 KB of JSON and holds the built-in tools`, async () => {
      const preset = (await loadPreset(name))!;
      const kernel = createKernel({ config: defaultConfig({ apiKey: 'k', cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home }) });
      for (const plugin of preset.plugins) kernel.use(plugin);
      kernel.seal();
      for (const tool of BUILTIN) expect(kernel.tools.has(tool), tool).toBe(true);
      const session = await startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
      const turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
      const tools = await kernel.hooks.selectTools.promise(defaultTools(kernel, turn), turn);
      const bytes = Buffer.byteLength(JSON.stringify(tools.map(toApiTool)));
      expect(bytes).toBeLessThanOrEqual(15 * 1024);
      expect(tools.map((t) => t.name)).not.toContain('web_fetch');
    });
  }

  it('of the minimal preset holds the file tools and bash', async () => {
    const preset = (await loadPreset('minimal'))!;
    const kernel = createKernel({ config: defaultConfig({ apiKey: 'k', cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home }) });
    for (const plugin of preset.plugins) kernel.use(plugin);
    expect(kernel.tools.names()).toEqual(expect.arrayContaining(['bash', 'edit_file', 'glob', 'grep', 'ls', 'read_file', 'write_file']));
  });
});
