import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { assemble, detectMode } from '../../cli/main.js';
import type { CommandLine } from '../../cli/options.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

const flags = (extra: Partial<CommandLine> = {}): CommandLine => ({ outputFormat: 'text', inputFormat: 'text', trust: true, ...extra });
const env = (extra: Record<string, string> = {}) => ({ KEEL_HOME: ws.home, PATH: process.env.PATH, ...extra });

/** The user layer lives in KEEL_HOME, outside the project. */
function writeUser(body: string) {
  const file = `${ws.home}/agent.config.ts`;
  writeFileSync(file, body);
  return file;
}

describe('config precedence', () => {
  it('flags beat env beat project beat user beat defaults, key by key', async () => {
    ws = makeWorkspace({ git: true });
    writeUser(`export default { model: 'user-model', smallModel: 'user-small', maxTurns: 7, maxTokens: 1000 };`);
    ws.write('agent.config.ts', `import { defineConfig } from 'keel';\nexport default defineConfig({ model: 'project-model', smallModel: 'project-small', maxTurns: 9 });`);
    const base = await assemble(flags(), env(), undefined, ws.dir);
    expect(base.config).toMatchObject({ model: 'project-model', smallModel: 'project-small', maxTurns: 9, maxTokens: 1000, permissionMode: 'ask' });
    expect(base.config.sources.maxTokens).toBe(`${ws.home}/agent.config.ts`);
    expect(base.config.sources.model).toBe(ws.path('agent.config.ts'));

    const withEnv = await assemble(flags(), env({ KEEL_MODEL: 'env-model', KEEL_MAX_TURNS: '3' }), undefined, ws.dir);
    expect(withEnv.config).toMatchObject({ model: 'env-model', smallModel: 'project-small', maxTurns: 3 });

    const withFlags = await assemble(flags({ model: 'flag-model', permissionMode: 'acceptEdits' }), env({ KEEL_MODEL: 'env-model' }), undefined, ws.dir);
    expect(withFlags.config).toMatchObject({ model: 'flag-model', permissionMode: 'edits', maxTurns: 9 });
  });

  it('finds agent.config.* from a subdirectory up to the project root, and no further', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('agent.config.mjs', `export default { model: 'from-root' };`);
    ws.write('packages/app/src/.keep', '');
    const kernel = await assemble(flags(), env(), undefined, ws.path('packages/app/src'));
    expect(kernel.config.model).toBe('from-root');
    // A config above the project root (outside the repository) is not the project's.
    const outer = makeWorkspace();
    outer.write('agent.config.json', JSON.stringify({ model: 'outer' }));
    outer.write('repo/.git/HEAD', '');
    const inner = await assemble(flags(), { KEEL_HOME: outer.home }, undefined, outer.path('repo'));
    expect(inner.config.model).not.toBe('outer');
    outer.cleanup();
  });

  it('merges permission rules and MCP servers from every layer', async () => {
    ws = makeWorkspace({ git: true });
    writeUser(`export default { permissions: { allow: ['bash(ls)'] }, mcpServers: { a: { command: 'a' } } };`);
    ws.write('agent.config.json', JSON.stringify({ permissions: { deny: ['bash(rm *)'] }, mcpServers: { b: { url: 'http://127.0.0.1:1/mcp' } } }));
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    expect(kernel.config.permissions).toEqual({ allow: ['bash(ls)'], ask: [], deny: ['bash(rm *)'] });
    expect(Object.keys(kernel.config.mcpServers)).toEqual(['a', 'b']);
  });

  it('names a preset, adds plugins and disables one', async () => {
    ws = makeWorkspace({ git: true });
    ws.write(
      'agent.config.ts',
      `import { definePlugin } from 'keel';
const hello = definePlugin(() => ({ name: 'hello', kernel: '^1.0.0', apply() {} }));
export default { preset: 'minimal', plugins: [hello()], disable: ['system-prompt'] };`,
    );
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    const names = kernel.plugins.map((p) => p.name);
    expect(names).toContain('hello');
    expect(names).not.toContain('system-prompt');
    expect(kernel.sealed).toBe(true);
  });

  it('validates plugin-owned keys with the owning plugin schema', async () => {
    ws = makeWorkspace({ git: true });
    ws.write(
      'agent.config.ts',
      `import { z } from 'keel';
const greeter = { name: 'greeter', kernel: '^1.0.0', config: { greeting: z.string() }, apply() {} };
export default { preset: 'minimal', plugins: [greeter], greeting: 'ahoy' };`,
    );
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    expect(kernel.config.greeting).toBe('ahoy');
    ws.write('agent.config.ts', `const greeter = { name: 'greeter', kernel: '^1.0.0', config: { greeting: (await import('keel')).z.string() }, apply() {} };
export default { preset: 'minimal', plugins: [greeter], greeting: 42 };`);
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${ws.path('agent.config.ts')}: greeting: Invalid input: expected string, received number`);
  });

  it('takes layers that plugins contribute at their own precedence', async () => {
    ws = makeWorkspace({ git: true });
    writeUser(`export default { model: 'user-model' };`);
    ws.write(
      'agent.config.ts',
      `import { z } from 'keel';
const frontMatter = {
  name: 'front-matter',
  kernel: '^1.0.0',
  config: { motto: z.string() },
  configLayers: ({ projectRoot }) => [{ kind: 'project', source: projectRoot + '/AGENTS.md', values: { model: 'from-front-matter', motto: 'steady' } }],
  apply() {},
};
export default { preset: { name: 'custom', plugins: [frontMatter] } };`,
    );
    const kernel = await assemble(flags(), env(), undefined, ws.dir);
    expect(kernel.config).toMatchObject({ model: 'from-front-matter', motto: 'steady' });
    expect(kernel.config.sources.model).toBe(ws.path('AGENTS.md'));
    const flagged = await assemble(flags({ model: 'flag-model' }), env(), undefined, ws.dir);
    expect(flagged.config.model).toBe('flag-model');
  });
});

describe('config errors name the file and the key', () => {
  it('an unknown key', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.json', JSON.stringify({ colour: 'blue' }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(new RegExp(`^${file}: colour: unknown key \\(known keys: `));
  });

  it('a wrong type, nested', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.ts', `export default { permissions: { allow: ['bash', 3] } };`);
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toMatchObject({
      message: `${file}: permissions.allow.1: Invalid input: expected string, received number`,
      exitCode: 2,
    });
  });

  it('a config that throws while loading', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.ts', `throw new Error('boom at load');\nexport default {};`);
    const err = await assemble(flags(), env(), undefined, ws.dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 2 });
    expect((err as Error).message).toMatch(new RegExp(`^${file.replace(/[.]/g, '\\.')}:1:\\d+: failed to load: boom at load$`));
  });

  it('a syntax error names the file, line and column', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.ts', `export default {\n  model: 'x'\n  maxTurns: 3,\n};\n`);
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toMatchObject({
      message: `${file}:3:3: failed to load: ParseError: Unexpected token, expected ","`,
      exitCode: 2,
    });
    const json = ws.write('agent.config.json', '{\n  "model": "x",\n  "maxTurns": 3,\n}\n');
    const jsonErr = (await assemble(flags({ config: json }), env(), undefined, ws.dir).catch((e: unknown) => e)) as Error;
    expect(jsonErr.message).toMatch(new RegExp(`^${json.replace(/[.]/g, '\\.')}:4:1: failed to load: `));
  });

  it('reports every bad key of a file at once, in one line', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.json', JSON.stringify({ modle: 'x', maxTurns: -1, permissionMode: 'yolo', colour: 'red' }));
    const err = (await assemble(flags(), env(), undefined, ws.dir).catch((e: unknown) => e)) as Error & { exitCode: number };
    expect(err.exitCode).toBe(2);
    expect(err.message.split('\n')).toHaveLength(1);
    expect(err.message).toMatch(new RegExp(`^${file.replace(/[.]/g, '\\.')}: maxTurns: .*; permissionMode: must be one of .*; modle: unknown key \\(did you mean model\\?\\); colour: unknown key \\(known keys: `));
  });

  it.each([
    [`{ name: 'Bad_Name', kernel: '^1.0.0', apply() {} }`, 'plugins.0 (Bad_Name): name "Bad_Name" must be kebab-case (lowercase letters, digits and "-")'],
    [`{ name: 'future', kernel: '^9.0.0', apply() {} }`, 'plugins.0 (future): needs kernel ^9.0.0, but this kernel is 1.0.0'],
    [`{ name: 'odd', kernel: 'not a range', apply() {} }`, 'plugins.0 (odd): kernel range "not a range" is not a valid semver range'],
    [`{ name: 'no-kernel', apply() {} }`, 'plugins.0 (no-kernel): missing "kernel" (a plugin is { name, kernel, apply }; kernel is a semver range such as "^1.0.0")'],
  ])('a bad plugin entry %s is a usage error naming the file and the entry', async (entry, message) => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.ts', `export default { plugins: [${entry}] };`);
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toMatchObject({ message: `${file}: ${message}`, exitCode: 2 });
  });

  it('a config that does not export an object', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.mjs', `export default 42;`);
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: the config must be an object`);
  });

  it('the user config is named too', async () => {
    ws = makeWorkspace({ git: true });
    const file = writeUser(`export default { maxTurns: -1 };`);
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: maxTurns: Too small: expected number to be >0`);
  });

  it('a bad flag or env value names the flag or variable', async () => {
    ws = makeWorkspace({ git: true });
    await expect(assemble(flags({ permissionMode: 'yolo' }), env(), undefined, ws.dir)).rejects.toThrow(/^--permission-mode: must be one of auto, edits, ask, manual/);
    await expect(assemble(flags(), env({ KEEL_MAX_TURNS: 'many' }), undefined, ws.dir)).rejects.toThrow(/^KEEL_MAX_TURNS: Invalid input: expected number/);
  });

  it('an unknown preset lists the known ones', async () => {
    ws = makeWorkspace({ git: true });
    await expect(assemble(flags({ preset: 'turbo' }), env(), undefined, ws.dir)).rejects.toMatchObject({
      message: expect.stringMatching(/^--preset: unknown preset "turbo" \(known presets: default, headless, minimal, policy-strict, fleet-worker\), and no package "turbo" is installed \(looked in .*\)$/),
      exitCode: 2,
    });
  });

  it('disabling a plugin the preset lacks', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.json', JSON.stringify({ preset: 'minimal', disable: ['warp-drive'] }));
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: disable: no plugin named "warp-drive" in preset "minimal"`);
  });

  it('a plugin entry that is a factory, not a plugin', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.ts', `const factory = () => ({ name: 'x', kernel: '^1.0.0', apply() {} });\nexport default { plugins: [factory] };`);
    await expect(assemble(flags(), env(), undefined, ws.dir)).rejects.toThrow(`${file}: plugins.0: a function (factory), not a plugin: did you forget to call the plugin factory?`);
  });

  it('--config pointing nowhere', async () => {
    ws = makeWorkspace({ git: true });
    await expect(assemble(flags({ config: 'missing.ts' }), env(), undefined, ws.dir)).rejects.toThrow(`--config: no such file: ${ws.path('missing.ts')}`);
  });
});

describe('mode detection', () => {
  const base = { env: {}, print: false, stdinIsTTY: true };
  it.each([
    [{ ...base, env: { KEEL_SUBAGENT_MODE: '1', KEEL_SDK_MODE: '1' }, print: true }, 'subagent'],
    [{ ...base, env: { KEEL_SDK_MODE: '1' }, print: true, stdinIsTTY: false }, 'sdk'],
    [{ ...base, inputFormat: 'stream-json', print: true }, 'sdk'],
    [{ ...base, print: true, stdinIsTTY: false }, 'headless'],
    [{ ...base, stdinIsTTY: false }, 'pipe'],
    [base, 'interactive'],
  ])('%o → %s', (input, mode) => {
    expect(detectMode(input)).toBe(mode);
  });
});

describe('keys owned by a plugin that is not loaded', () => {
  const capture = () => {
    let text = '';
    const io = { stdin: process.stdin, stdout: { write: () => true }, stderr: { write: (s: string) => ((text += s), true) } };
    return { io: io as unknown as Parameters<typeof assemble>[2], text: () => text };
  };

  it('warns that mcpServers has no effect in a preset without mcp-bridge, and names the plugin', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.json', JSON.stringify({ mcpServers: { files: { command: 'mcp-files' } } }));
    const out = capture();
    await assemble({ ...flags(), preset: 'minimal' }, env(), out.io, ws.dir);
    expect(out.text()).toBe(`keel: warning: ${file}: mcpServers has no effect: the plugin that uses it (mcp-bridge) is not loaded; add it to \`plugins\` or pick a preset that has it\n`);
  });

  it('warns (instead of calling it unknown) for a key whose plugin is disabled, and stays quiet when it is loaded', async () => {
    ws = makeWorkspace({ git: true });
    const file = ws.write('agent.config.json', JSON.stringify({ disable: ['query-retry'], retry: { maxRetries: 1 } }));
    const out = capture();
    const kernel = await assemble(flags(), env(), out.io, ws.dir);
    expect(kernel.services.get('retry')).toBeUndefined();
    expect(out.text()).toContain(`keel: warning: ${file}: retry has no effect: the plugin that uses it (query-retry) is not loaded`);
    ws.write('agent.config.json', JSON.stringify({ retry: { maxRetries: 1 } }));
    const quiet = capture();
    await assemble(flags(), env(), quiet.io, ws.dir);
    expect(quiet.text()).toBe('');
  });
});
