import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../kernel/index.js';
import { mergeLayers, validateLayer } from '../../../cli/config.js';
import instructions from '../../../plugins/instructions/index.js';
import { importsOf } from '../../../plugins/instructions/files.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import systemPrompt from '../../../plugins/system-prompt/index.js';
import { say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { recorder } from '../compact-auto/harness.js';

describe('instructions', () => {
  let server: ScriptedServer | undefined;
  let ws: Workspace | undefined;
  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  /** Runs one turn from `cwd` and returns the system prompt blocks the model received. */
  async function systemFor(cwd: string, turns = 1) {
    server = await startAnthropicServer(Array.from({ length: turns }, () => say('ok')));
    const rec = recorder();
    const kernel = testKernel([rec.plugin, systemPrompt(), instructions(), queryAnthropic(), permissions()], {
      baseURL: server.url,
      keelHome: ws!.home,
      cwd,
      projectRoot: ws!.dir,
    });
    const session = await testSession(kernel);
    for (let i = 0; i < turns; i++) await runAgent(kernel, session, 'hi');
    const systems = server.messageRequests().map((r) => (r.body as { system: Array<{ text: string }> }).system.map((b) => b.text));
    return { systems, system: systems[0]!.join('\n'), rec };
  }

  it('reads the user file, the root and nested AGENTS.md/CLAUDE.md in order, without their front matter', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('AGENTS.md', '---\npermission_mode: edits\n---\nROOT AGENTS rule\n');
    ws.write('CLAUDE.md', 'ROOT CLAUDE rule\n');
    ws.write('pkg/AGENTS.md', 'PKG rule\n');
    mkdirSync(ws.path('pkg/deep'), { recursive: true });
    writeFileSync(path.join(ws.home, 'AGENTS.md'), 'USER rule');
    const { system, systems } = await systemFor(ws.path('pkg/deep'), 2);
    const order = ['USER rule', 'ROOT AGENTS rule', 'ROOT CLAUDE rule', 'PKG rule'].map((t) => system.indexOf(t));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(system).not.toContain('permission_mode');
    // After the base prompt, and the same on every turn (a stable, cacheable prefix).
    expect(systems[0]![0]).toContain('You are Keel');
    expect(systems[1]).toEqual(systems[0]);
  });

  it('expands @imports relative to the importing file, nested, once each, cutting cycles and stopping at depth 5', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('AGENTS.md', 'Follow @docs/style.md and ask @someone. Emails like a@b.com stay. Code `@docs/no.md` is not an import.\n```\n@docs/no.md\n```\n');
    ws.write('docs/style.md', 'STYLE: tabs. See @./more/naming.md, and @../AGENTS.md again.');
    ws.write('docs/more/naming.md', 'NAMING: camelCase. @l1.md');
    ws.write('docs/no.md', 'MUST NOT APPEAR');
    for (let i = 1; i <= 6; i++) ws.write(`docs/more/l${i}.md`, `LEVEL ${i} @l${i + 1}.md`);
    const { system, rec } = await systemFor(ws.dir);
    expect(system).toContain('STYLE: tabs.');
    expect(system).toContain('NAMING: camelCase.');
    expect(system).toContain(`Imported from ${ws.path('docs/style.md')} (@docs/style.md)`);
    expect(system).not.toContain('MUST NOT APPEAR');
    expect(system.match(/Follow @docs\/style\.md/g)).toHaveLength(1);
    // AGENTS.md → style (1) → naming (2) → l1 (3) → l2 (4) → l3 (5); l4 would be a sixth level.
    expect(system).toContain('LEVEL 3');
    expect(system).not.toContain('LEVEL 4');
    const logs = rec.of('log').map((l) => l.message);
    expect(logs.some((m) => m.includes('imports it back: cycle cut'))).toBe(true);
    expect(logs.some((m) => m.includes('nested deeper than 5 imports'))).toBe(true);
  });

  it('finds import references outside code only', () => {
    expect(importsOf('see @a/b.md, @c.md. `@d.md` x@y.z\n```\n@e.md\n```\n@~/f.md')).toEqual(['a/b.md', 'c.md', '~/f.md']);
  });

  it('adds nothing when there are no instruction files', async () => {
    ws = makeWorkspace({ git: true });
    const { systems } = await systemFor(ws.dir);
    expect(systems[0]!.some((t) => t.startsWith('# Instructions'))).toBe(false);
  });

  describe('front matter as config layers', () => {
    const layersFor = async () => {
      const plugin = instructions();
      return plugin.configLayers!({ cwd: ws!.dir, projectRoot: ws!.dir, keelHome: ws!.home, trusted: true });
    };

    it('becomes a project layer (and a user layer for $KEEL_HOME/AGENTS.md), merged and validated like config', async () => {
      ws = makeWorkspace({ git: true });
      ws.write('AGENTS.md', '---\npermission_mode: auto\nmcp_servers:\n  files:\n    command: npx\n    args: [server-files]\nmax_turns: 7\n---\nbody\n');
      writeFileSync(path.join(ws.home, 'AGENTS.md'), '---\nmodel: claude-user-model\nmax_turns: 3\n---\nuser body');
      const layers = await layersFor();
      expect(layers).toEqual([
        { kind: 'user', source: path.join(ws.home, 'AGENTS.md'), values: { model: 'claude-user-model', maxTurns: 3 } },
        { kind: 'project', source: ws.path('AGENTS.md'), values: { permissionMode: 'auto', mcpServers: { files: { command: 'npx', args: ['server-files'] } }, maxTurns: 7 } },
      ]);
      for (const layer of layers) validateLayer(layer);
      const config = mergeLayers(layers, { cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home });
      expect(config.permissionMode).toBe('auto');
      expect(config.maxTurns).toBe(7);
      expect(config.model).toBe('claude-user-model');
      expect(config.mcpServers.files).toEqual({ command: 'npx', args: ['server-files'] });
    });

    it('a bad value fails validation naming the file and the key', async () => {
      ws = makeWorkspace({ git: true });
      ws.write('CLAUDE.md', '---\npermission_mode: yolo\n---\n');
      const [layer] = await layersFor();
      expect(() => validateLayer(layer!)).toThrow(`${ws.path('CLAUDE.md')}: permissionMode: must be one of`);
    });

    it('invalid YAML, a non-mapping and forbidden keys are errors naming the file', async () => {
      ws = makeWorkspace({ git: true });
      ws.write('AGENTS.md', '---\npermission_mode: [unclosed\n---\n');
      await expect(layersFor()).rejects.toThrow(`${ws.path('AGENTS.md')}: front matter is not valid YAML`);
      ws.write('AGENTS.md', '---\n- a list\n---\n');
      await expect(layersFor()).rejects.toThrow(`${ws.path('AGENTS.md')}: front matter must be a mapping`);
      ws.write('AGENTS.md', '---\nbase_url: http://evil.example\n---\n');
      await expect(layersFor()).rejects.toThrow(`${ws.path('AGENTS.md')}: front matter: base_url: cannot be set from an instructions file`);
    });
  });
});

