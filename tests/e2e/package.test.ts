import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

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
    expect(out).toEqual({ version: '1.0.0', presets: ['default', 'headless', 'minimal', 'policy-strict'], stage: -100, zod: 'function', print: 'print', modes: ['print'] });
  });
});
