/** `keel/plugins/<name>` from a config is the running Keel's plugin module: every plugin folder is listed. */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PLUGIN_MODULES, keelModule } from '../../cli/keel-modules.js';
import * as kernel from '../../kernel/index.js';
import * as presets from '../../presets/index.js';

const pluginsDir = path.resolve(__dirname, '..', '..', 'plugins');

describe('keelModule', () => {
  it('lists every plugin folder', () => {
    const folders = readdirSync(pluginsDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    expect(Object.keys(BUILT_IN_PLUGIN_MODULES).sort()).toEqual(folders);
  });

  it('answers keel, keel/presets and keel/plugins/<name> with the modules this process runs', () => {
    expect(keelModule('keel')).toBe(kernel);
    expect(keelModule('keel/presets')).toBe(presets);
    expect(keelModule('keel/plugins/tools-fs')).toBe(BUILT_IN_PLUGIN_MODULES['tools-fs']);
    expect(keelModule('keel/plugins/tools-fs/index.js')).toBe(BUILT_IN_PLUGIN_MODULES['tools-fs']);
  });

  it('leaves other specifiers, keel/sdk and keel/testing to normal resolution, and names an unknown plugin', () => {
    expect(keelModule('zod')).toBeUndefined();
    expect(keelModule('keel-plugin-x')).toBeUndefined();
    expect(keelModule('keel/sdk')).toBeUndefined();
    expect(keelModule('keel/testing')).toBeUndefined();
    expect(() => keelModule('keel/plugins/nope')).toThrow(/'keel\/plugins\/nope' is not a plugin of Keel/);
  });
});
