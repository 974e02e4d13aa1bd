/**
 * agent.config.ts through the built binary: `import 'keel'` (and keel/presets, keel/plugins/<name>) in a config
 * and in a plugin package it imports is the running Keel, not a second copy; the transpiled config is cached in
 * $KEEL_HOME/cache/transpiled (0700 folder, 0600 files), reused, recompiled when the config changes, and an entry
 * that was edited, has loose modes or is a symlink never runs (canaries outside the workspace).
 */
import { createHmac } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { say, startAnthropicServer, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const REPO = path.resolve(__dirname, '..', '..');
let ws: Workspace;
let outside: string;
let server: ScriptedServer;

beforeEach(async () => {
  ws = makeWorkspace({ git: true });
  outside = mkdtempSync(path.join(tmpdir(), 'keel-canary-'));
  server = await startAnthropicServer([], { route: () => say('ok') });
});
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

const cacheDir = () => path.join(ws.home, 'cache', 'transpiled');
const entries = () => (existsSync(cacheDir()) ? readdirSync(cacheDir()).filter((f) => f.endsWith('.js')) : []);
const run = (extra: Record<string, string> = {}) =>
  runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, HOME: ws.home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url, ...extra }, timeoutMs: 60_000 });

/** A config whose plugin records, at apply time, whether what it imported is what the kernel it is given uses. */
function writeIdentityConfig(out: string): void {
  // A plugin package as npm installs it: an ES module only (exports offer `import` alone), keel as a peer, its own
  // `import 'keel'`.
  const pkg = ws.path('node_modules/keel-plugin-probe');
  ws.write('node_modules/keel-plugin-probe/package.json', JSON.stringify({ name: 'keel-plugin-probe', version: '1.0.0', type: 'module', exports: { '.': { import: './index.js' } }, peerDependencies: { keel: '*' } }));
  ws.write('node_modules/keel-plugin-probe/index.js', "import * as keel from 'keel';\nimport { Registry } from 'keel';\nexport const seen = { keel, Registry };\nexport default keel.definePlugin(() => ({ name: 'probe', kernel: '*', apply() {} }));\n");
  expect(existsSync(pkg)).toBe(true);
  ws.write(
    'agent.config.ts',
    `import { writeFileSync } from 'node:fs';
import { defineConfig, definePlugin, Registry, ServiceRegistry, ProtectedPaths, Stage, z, type Kernel } from 'keel';
import * as keel from 'keel';
import { loadPreset } from 'keel/presets';
import * as toolsFs from 'keel/plugins/tools-fs';
import probe, { seen } from 'keel-plugin-probe';

const identity = definePlugin(() => ({
  name: 'identity',
  kernel: '^1.0.0',
  async apply(kernel: Kernel) {
    const preset = await loadPreset('default');
    const readFile = kernel.tools.get('read_file');
    const checks = {
      registry: kernel.tools instanceof Registry,
      services: kernel.services instanceof ServiceRegistry,
      protectedPaths: kernel.protected instanceof ProtectedPaths,
      zod: readFile?.input instanceof z.ZodType,
      presetPlugins: kernel.plugins.filter((p) => preset!.plugins.includes(p)).length,
      pluginModule: typeof toolsFs.default === 'function',
      packageSameKeel: seen.keel.Stage === Stage && seen.Registry === Registry && seen.keel === keel,
      stageLate: typeof Stage.LATE,
    };
    writeFileSync(${JSON.stringify(out)}, JSON.stringify(checks));
  },
}));

export default defineConfig({ preset: 'default', plugins: [identity(), probe()] });
`,
  );
}

describe('agent.config.ts and the running Keel', () => {
  it("imports of keel, keel/presets, keel/plugins/* and a plugin package's own import of keel are the running kernel's instances", async () => {
    const out = path.join(outside, 'identity.json');
    writeIdentityConfig(out);
    const first = await run();
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const checks = JSON.parse(readFileSync(out, 'utf8'));
    expect(checks).toMatchObject({ registry: true, services: true, protectedPaths: true, zod: true, pluginModule: true, packageSameKeel: true, stageLate: 'number' });
    expect(checks.presetPlugins).toBeGreaterThan(5);
    // The same through the cache (config and plugin package both from it).
    unlinkSync(out);
    const second = await run();
    expect(second.code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(checks);
  }, 120_000);
});

describe('the transpile cache', () => {
  const config = (text: string) => ws.write('agent.config.ts', `import { defineConfig } from 'keel';\nimport { writeFileSync } from 'node:fs';\n${text}\nexport default defineConfig({ maxTurns: 3 as number });\n`);
  const marker = (name: string) => path.join(outside, name);

  it('is written 0600 in a 0700 folder of the user, and reused: an entry signed with the key runs instead of the source', async () => {
    config(`writeFileSync(${JSON.stringify(marker('source'))}, 'ran');`);
    expect((await run()).code).toBe(0);
    expect(existsSync(marker('source'))).toBe(true);
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    const [entry] = entries();
    expect(entries()).toHaveLength(1);
    for (const file of [entry!, 'key']) {
      const stat = statSync(path.join(cacheDir(), file));
      expect(stat.mode & 0o777).toBe(0o600);
      expect(stat.uid).toBe(process.getuid!());
    }
    // Proof the entry, not the source, runs: re-sign it with other code, as only the key's holder can.
    const file = path.join(cacheDir(), entry!);
    const code = readFileSync(file, 'utf8').split('\n').slice(1).join('\n').replace(marker('source'), marker('cached'));
    const key = Buffer.from(readFileSync(path.join(cacheDir(), 'key'), 'utf8'), 'hex');
    writeFileSync(file, `${createHmac('sha256', key).update(`${entry}\0`).update(code).digest('hex')}\n${code}`);
    rmSync(marker('source'));
    expect((await run()).code).toBe(0);
    expect(existsSync(marker('cached'))).toBe(true);
    expect(existsSync(marker('source'))).toBe(false);
  }, 120_000);

  it('an edited entry, one with loose modes, a symlinked one or a loose folder never runs; the source is compiled again', async () => {
    config(`writeFileSync(${JSON.stringify(marker('source'))}, 'ran');`);
    expect((await run()).code).toBe(0);
    const [entry] = entries();
    const file = path.join(cacheDir(), entry!);
    const good = readFileSync(file, 'utf8');
    const evil = good.replace(marker('source'), marker('canary'));
    const attempts: Array<[string, () => void]> = [
      ['edited, signature kept', () => writeFileSync(file, evil)],
      ['edited, signature of another key', () => writeFileSync(file, `${createHmac('sha256', Buffer.alloc(32, 7)).update(`${entry}\0`).update(evil.slice(65)).digest('hex')}\n${evil.slice(65)}`)],
      ['world-readable and writable', () => {
        const code = evil.slice(65);
        const key = Buffer.from(readFileSync(path.join(cacheDir(), 'key'), 'utf8'), 'hex');
        writeFileSync(file, `${createHmac('sha256', key).update(`${entry}\0`).update(code).digest('hex')}\n${code}`);
        chmodSync(file, 0o666);
      }],
      ['a symlink to a signed entry', () => {
        const code = evil.slice(65);
        const key = Buffer.from(readFileSync(path.join(cacheDir(), 'key'), 'utf8'), 'hex');
        const target = path.join(outside, 'planted.js');
        writeFileSync(target, `${createHmac('sha256', key).update(`${entry}\0`).update(code).digest('hex')}\n${code}`, { mode: 0o600 });
        unlinkSync(file);
        symlinkSync(target, file);
      }],
      ['a signed entry in a folder others can write', () => {
        const code = evil.slice(65);
        const key = Buffer.from(readFileSync(path.join(cacheDir(), 'key'), 'utf8'), 'hex');
        writeFileSync(file, `${createHmac('sha256', key).update(`${entry}\0`).update(code).digest('hex')}\n${code}`, { mode: 0o600 });
        chmodSync(cacheDir(), 0o777);
      }],
    ];
    for (const [what, tamper] of attempts) {
      tamper();
      rmSync(marker('source'), { force: true });
      const again = await run();
      expect(again.code, what).toBe(0);
      expect(existsSync(marker('canary')), what).toBe(false);
      expect(existsSync(marker('source')), what).toBe(true);
      chmodSync(cacheDir(), 0o700);
    }
  }, 240_000);

  it('a changed config is compiled again, into a new entry', async () => {
    config(`writeFileSync(${JSON.stringify(marker('one'))}, 'ran');`);
    expect((await run()).code).toBe(0);
    config(`writeFileSync(${JSON.stringify(marker('two'))}, 'ran');`);
    rmSync(marker('one'));
    expect((await run()).code).toBe(0);
    expect(existsSync(marker('two'))).toBe(true);
    expect(existsSync(marker('one'))).toBe(false);
    expect(entries()).toHaveLength(2);
  }, 120_000);

  it('a config importing its own TypeScript files (written as .js), JSON and awaiting at top level loads, from the cache too', async () => {
    ws.write('lib/rules.ts', "import { Stage } from 'keel';\nexport const late: number = Stage.LATE;\nexport default ['one', 'two'] as string[];\n");
    ws.write('lib/extra.json', JSON.stringify({ turns: 4 }));
    ws.write(
      'agent.config.ts',
      `import { defineConfig } from 'keel';\nimport { writeFileSync } from 'node:fs';\nimport rules, { late } from './lib/rules.js';\nimport extra from './lib/extra.json';\nconst later = await Promise.resolve(late);\nwriteFileSync(${JSON.stringify(marker('graph'))}, JSON.stringify({ rules, later, extra }));\nexport default defineConfig({ maxTurns: extra.turns });\n`,
    );
    for (let i = 0; i < 2; i++) {
      const r = await run();
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(readFileSync(marker('graph'), 'utf8'))).toEqual({ rules: ['one', 'two'], later: expect.any(Number), extra: { turns: 4 } });
      rmSync(marker('graph'));
    }
    expect(entries()).toHaveLength(2);
  }, 120_000);

  it("this repository's own agent.config.ts loads through the cache", async () => {
    cpSync(path.join(REPO, 'agent.config.ts'), ws.path('agent.config.ts'));
    for (let i = 0; i < 2; i++) {
      const r = await runKeel(['-p', '/rules', '--trust'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, HOME: ws.home }, timeoutMs: 60_000 });
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('Rules of this repository:');
    }
    expect(entries()).toHaveLength(1);
  }, 120_000);
});
