/** keel config | plugins | doctor | init through the built CLI. */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runKeel } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());
const env = () => ({ KEEL_HOME: ws.home, HOME: ws.home });

describe('keel config', () => {
  it('prints each key with the layer that set it, and never prints a secret', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('agent.config.json', JSON.stringify({ model: 'claude-from-project', apiKey: 'sk-ant-SECRET-123', permissions: { allow: ['bash(npm test)'] } }));
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ smallModel: 'claude-from-user' }));
    const trust = await runKeel(['trust'], { cwd: ws.dir, env: env() });
    expect(trust.code).toBe(0);
    const run = await runKeel(['config'], { cwd: ws.dir, env: { ...env(), KEEL_MAX_TURNS: '7' } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`model = "claude-from-project"  (${ws.path('agent.config.json')})`);
    expect(run.stdout).toContain(`smallModel = "claude-from-user"  (${path.join(ws.home, 'agent.config.json')})`);
    expect(run.stdout).toContain('maxTurns = 7  (env)');
    expect(run.stdout).toContain('permissionMode = "ask"  (default)');
    expect(run.stdout).toContain('apiKey = "[set]"');
    expect(run.stdout).not.toContain('SECRET');
    const json = await runKeel(['config', '--json'], { cwd: ws.dir, env: env() });
    const entries = JSON.parse(json.stdout) as Array<{ key: string; source: string }>;
    expect(entries.find((e) => e.key === 'model')).toMatchObject({ source: ws.path('agent.config.json') });
  });
});

describe('keel config: env and model aliases', () => {
  it('labels apiKey and baseURL from the environment (env), and resolves a model alias, naming it', async () => {
    ws = makeWorkspace({ git: true });
    const run = await runKeel(['config'], { cwd: ws.dir, env: { ...env(), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', ANTHROPIC_MODEL: 'sonnet[1m]', KEEL_SMALL_MODEL: 'haiku' } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('apiKey = "[set]"  (env)');
    expect(run.stdout).toContain('baseURL = "http://127.0.0.1:9"  (env)');
    expect(run.stdout).toContain('model = "claude-sonnet-5-5[1m]"  (env, alias sonnet[1m])');
    expect(run.stdout).toMatch(/smallModel = "claude-haiku-5-5"  \(env, alias haiku\)/);
    expect(run.stdout).toContain('modelAliases = {"sonnet":"claude-sonnet-5-5","opus":"claude-opus-4-6","haiku":"claude-haiku-5-5"}  (query-anthropic; [1m] after one asks for the 1M context)');
  });
});

describe('keel plugins', () => {
  it('lists the plugins with their source, then every hook’s taps in order', async () => {
    ws = makeWorkspace({ git: true });
    const run = await runKeel(['plugins'], { cwd: ws.dir, env: env() });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^plugin\s+version\s+source\n/);
    expect(run.stdout).toMatch(/\npermissions\s+-\s+preset default\n/);
    expect(run.stdout).toContain('Hooks and their taps, in call order:');
    expect(run.stdout).toMatch(/\nprePermission: .*permissions/);
  });
});

describe('keel doctor', () => {
  it('says what to fix, exits 1 on a required failure, and 0 when ready', async () => {
    ws = makeWorkspace({ git: true });
    // A PATH with node and git but without bwrap and rg.
    const bin = path.join(ws.home, 'bin');
    mkdirSync(bin);
    for (const tool of ['node', 'git', 'bash', 'sh']) {
      const found = (process.env.PATH ?? '').split(':').map((d) => path.join(d, tool)).find((f) => existsSync(f));
      if (found) symlinkSync(found, path.join(bin, tool));
    }
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ sandbox: { enabled: true } }));
    const broken = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env(), PATH: bin } });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^FAIL\s+auth\s+no API key: set ANTHROPIC_API_KEY or run keel login$/m);
    expect(broken.stdout).toMatch(/^FAIL\s+sandbox\s+bubblewrap \(bwrap\) is not installed/m);
    expect(broken.stdout).toMatch(/^warn\s+ripgrep\s+rg is not installed/m);
    expect(broken.stdout).toContain('2 problem(s) to fix');
    writeFileSync(path.join(ws.home, 'agent.config.json'), '{}');
    const ready = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env(), ANTHROPIC_API_KEY: 'k' } });
    expect(ready.code).toBe(0);
    expect(ready.stdout).toMatch(/^ok\s+auth\s+API key from ANTHROPIC_API_KEY$/m);
  });
});

describe('keel init', () => {
  it('writes a typed config and an AGENTS.md from the project, never over existing files unless --force', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('package.json', JSON.stringify({ name: 'demo-app', scripts: { test: 'vitest run', lint: 'eslint .' } }));
    ws.write('pnpm-lock.yaml', '');
    const first = await runKeel(['init'], { cwd: ws.dir, env: env() });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('detected pnpm: pnpm install, pnpm test, pnpm run lint');
    const config = readFileSync(ws.path('agent.config.ts'), 'utf8');
    expect(config).toContain("import { defineConfig } from 'keel';");
    expect(config).toContain("allow: ['bash(pnpm test)', 'bash(pnpm run lint)']");
    expect(readFileSync(ws.path('AGENTS.md'), 'utf8')).toContain('# demo-app\n');
    expect(readFileSync(ws.path('AGENTS.md'), 'utf8')).toContain('- Test: `pnpm test`');
    ws.write('AGENTS.md', 'mine');
    const second = await runKeel(['init'], { cwd: ws.dir, env: env() });
    expect(second.stdout).toContain('AGENTS.md exists: left as it is (--force to overwrite)');
    expect(readFileSync(ws.path('AGENTS.md'), 'utf8')).toBe('mine');
    await runKeel(['init', '--force'], { cwd: ws.dir, env: env() });
    expect(readFileSync(ws.path('AGENTS.md'), 'utf8')).toContain('# demo-app');
    // The written config loads: keel config reads it once the folder is trusted.
    await runKeel(['trust'], { cwd: ws.dir, env: env() });
    const loaded = await runKeel(['config'], { cwd: ws.dir, env: env() });
    expect(loaded.code).toBe(0);
    expect(loaded.stdout).toContain(`permissions = {"allow":["bash(pnpm test)","bash(pnpm run lint)"],"ask":[],"deny":["read_file(.env)","read_file(.env.*)"]}  (${ws.path('agent.config.ts')})`);
  });
});
