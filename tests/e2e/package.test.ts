import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';
import { callTool, say, startAnthropicServer } from '../helpers/anthropic-server.js';
import { collect } from '../helpers/cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let ws: Workspace | undefined;
afterEach(() => ws?.cleanup());

// A third-party plugin package depends on `keel`: its imports resolve through package.json "exports" to dist/.
describe('the published package', () => {
  it('exports the kernel API, the presets and each plugin', () => {
    ws = makeWorkspace();
    mkdirSync(ws.path('node_modules'));
    symlinkSync(root, ws.path('node_modules/keel'));
    const script = ws.write(
      'check.mjs',
      `import { createKernel, definePlugin, Stage, z, KERNEL_VERSION } from 'keel';
import { loadPreset, PRESET_NAMES } from 'keel/presets';
import print from 'keel/plugins/print';
const preset = await loadPreset('minimal');
const kernel = createKernel();
for (const plugin of preset.plugins) kernel.use(plugin);
kernel.use(definePlugin(() => ({ name: 'third-party', kernel: '^1.0.0', apply() {} }))()).seal();
console.log(JSON.stringify({ version: KERNEL_VERSION, presets: PRESET_NAMES, stage: Stage.EARLY, zod: typeof z.object, print: print().name, modes: kernel.modes.names() }));`,
    );
    const out = JSON.parse(execFileSync(process.execPath, [script], { cwd: ws.dir }).toString());
    expect(out).toEqual({ version: '1.0.0', presets: ['default', 'headless', 'minimal', 'policy-strict', 'fleet-worker'], stage: -100, zod: 'function', print: 'print', modes: ['print'] });
  });

  it('runs the keel/sdk example from the README against a scripted server', async () => {
    const server = await startAnthropicServer([callTool('write_file', { path: 'x.txt', content: 'x' }), say('The folder holds an example.')]);
    try {
      ws = makeWorkspace({ git: true });
      mkdirSync(ws.path('node_modules'));
      symlinkSync(root, ws.path('node_modules/keel'));
      copyFileSync(path.join(root, 'examples', 'sdk-query.mjs'), ws.path('sdk-query.mjs'));
      // Spawned asynchronously: the scripted server answers from this process.
      const child = spawn(process.execPath, ['sdk-query.mjs', 'what is here?'], {
        cwd: ws.dir,
        env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url, KEEL_HOME: ws.home },
      });
      const run = await collect(child);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('The folder holds an example.\n');
      expect(run.stderr).toContain('[keel asks] write_file {"path":"x.txt","content":"x"}');
      expect(run.stderr).toMatch(/\[success: 2 turns, \$\d+\.\d{4}\]/);
      expect(existsSync(ws.path('x.txt'))).toBe(false);
    } finally {
      await server.close();
    }
  });
});
