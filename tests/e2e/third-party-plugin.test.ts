/**
 * A third-party plugin as a user meets it: examples/keel-plugin-git-guard and Keel itself are packed with
 * `npm pack`, both tarballs are installed into a temp project, the project's agent.config.ts names the plugin by
 * its package (`plugins: [['keel-plugin-git-guard', { branches: ['main'] }]]`), and the installed `keel` binary
 * refuses a scripted `git push` through it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, say, startAnthropicServer } from '../helpers/anthropic-server.js';
import { collect } from '../helpers/cli.js';
import { installPacked, npm, pack, REPO_ROOT } from '../helpers/pack.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const example = path.join(REPO_ROOT, 'examples', 'keel-plugin-git-guard');
let ws: Workspace;
let keel: string;

function runInstalled(args: string[], extraEnv: Record<string, string> = {}, cwd = ws.path('app')) {
  const child = spawn(process.execPath, [keel, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: ws.home, KEEL_HOME: ws.home, NO_COLOR: '1', ...extraEnv },
  });
  child.stdin!.end();
  return collect(child, 60_000);
}

beforeAll(() => {
  ws = makeWorkspace();
  const project = ws.path('app');
  keel = installPacked(ws.path('packs'), project, [example]);
  writeFileSync(path.join(project, 'agent.config.ts'), "import { defineConfig } from 'keel';\n\nexport default defineConfig({ plugins: [['keel-plugin-git-guard', { branches: ['main'] }]] });\n");
  // The same plugin imported by a config, as before names were possible.
  writeFileSync(path.join(project, 'imported.config.ts'), "import { defineConfig } from 'keel';\nimport gitGuard from 'keel-plugin-git-guard';\n\nexport default defineConfig({ plugins: [gitGuard()] });\n");
  const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init');
}, 180_000);
afterAll(() => ws?.cleanup(), 120_000);

describe('a packed third-party plugin', () => {
  it('runs its own tests, the in-kernel one through keel/testing of the packed keel', () => {
    // As its author works on it: the package's folder, with keel installed beside it as a dev dependency.
    const dev = ws.path('dev/keel-plugin-git-guard');
    cpSync(example, dev, { recursive: true });
    mkdirSync(path.join(dev, 'node_modules'));
    symlinkSync(ws.path('app/node_modules/keel'), path.join(dev, 'node_modules', 'keel'));
    const out = execFileSync(process.execPath, ['--test', '--test-reporter=tap'], { cwd: dev, encoding: 'utf8', env: { ...process.env, KEEL_HOME: ws.home } });
    expect(out).toMatch(/# pass [1-9]/);
    expect(out).toMatch(/# fail 0/);
    expect(out).toContain('a push to main is refused before the permission policy');
  });

  it('refuses a scripted git push and commit on main through the installed keel, and lets other commands run', async () => {
    const server = await startAnthropicServer([
      callTool('bash', { command: 'git push origin main' }, 'push'),
      callTool('bash', { command: 'git commit --allow-empty -m wip' }, 'commit'),
      callTool('bash', { command: 'git status --short' }, 'status'),
      say('done'),
    ]);
    try {
      const project = ws.path('app');
      const run = await runInstalled(['-p', 'ship it', '--trust', '--permission-mode', 'auto'], { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const results: Record<string, { content: unknown; is_error?: boolean }> = {};
      for (const r of server.messageRequests()) for (const m of r.body.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') results[b.tool_use_id] = b;
      expect(results.push).toMatchObject({ is_error: true, content: expect.stringContaining('git-guard: pushing to the protected branch main') });
      expect(results.commit).toMatchObject({ is_error: true, content: expect.stringContaining('committing on the protected branch main') });
      expect(results.status?.is_error).toBeFalsy();
      const log = execFileSync('git', ['log', '--oneline'], { cwd: project, encoding: 'utf8' }).trim().split('\n');
      expect(log).toHaveLength(1);
    } finally {
      await server.close();
    }
  }, 90_000);

  it('keel plugins names the package, its version and the folder it came from; an importing config still works', async () => {
    const trust = await runInstalled(['trust']);
    expect(trust.code).toBe(0);
    const dir = path.join(ws.path('app'), 'node_modules', 'keel-plugin-git-guard');
    const byName = await runInstalled(['plugins']);
    expect(byName.code).toBe(0);
    expect(byName.stdout).toMatch(new RegExp(`\\ngit-guard\\s+1\\.0\\.0\\s+package keel-plugin-git-guard@1\\.0\\.0 \\(${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}; .*agent\\.config\\.ts: plugins\\.0\\)\\n`));
    const config = await runInstalled(['config']);
    expect(config.stdout).toContain(`plugins.git-guard = "git-guard"  (${path.join(ws.path('app'), 'agent.config.ts')}: plugins.0, package keel-plugin-git-guard@1.0.0 from ${dir})`);
    const imported = await runInstalled(['--config', 'imported.config.ts', 'describe']);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/prePermission: .*git-guard/);
  }, 90_000);

  it('installs alone into $KEEL_HOME with a plain npm install (its keel peer is optional) and loads there in an untrusted folder', async () => {
    // --offline: npm must not need the registry, as it would to fetch a required `keel` peer.
    const home = ws.path('user-home');
    mkdirSync(home, { recursive: true });
    npm(['install', '--offline', pack(ws.path('packs'), example)], home);
    expect(existsSync(path.join(home, 'node_modules', 'keel'))).toBe(false);
    writeFileSync(path.join(home, 'agent.config.ts'), "export default { plugins: [['keel-plugin-git-guard', { branches: ['main'] }]] };\n");
    const elsewhere = ws.path('elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const git = (...args: string[]) => execFileSync('git', args, { cwd: elsewhere, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    const server = await startAnthropicServer([callTool('bash', { command: 'git push origin main' }, 'push'), say('done')]);
    try {
      const run = await runInstalled(['-p', 'ship it', '--permission-mode', 'auto'], { KEEL_HOME: home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url }, elsewhere);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const result = server.messageRequests()[1]!.body.messages.flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : [])).find((b: { type: string }) => b.type === 'tool_result');
      expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('git-guard: pushing to the protected branch main') });
    } finally {
      await server.close();
    }
  }, 120_000);
});
