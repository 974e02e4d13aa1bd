/**
 * A third-party plugin as a user meets it: examples/keel-plugin-git-guard and Keel itself are packed with
 * `npm pack`, both tarballs are installed into a temp project, the plugin is named in that project's
 * agent.config.ts, and the installed `keel` binary refuses a scripted `git push` through it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, say, startAnthropicServer } from '../helpers/anthropic-server.js';
import { collect } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';
import { spawn } from 'node:child_process';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const example = path.join(root, 'examples', 'keel-plugin-git-guard');
let ws: Workspace;

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' } });
}

beforeAll(() => {
  ws = makeWorkspace();
  const packs = ws.path('packs');
  mkdirSync(packs);
  // --ignore-scripts: packing must not rebuild dist/ under the other tests' feet; `npm test` built it already.
  const keelTgz = npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', packs], root).trim().split('\n').pop()!;
  const guardTgz = npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', packs], example).trim().split('\n').pop()!;
  const project = ws.path('app');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  npm(['install', '--prefer-offline', '--ignore-scripts', '--no-save', path.join(packs, keelTgz), path.join(packs, guardTgz)], project);
  writeFileSync(
    path.join(project, 'agent.config.ts'),
    "import { defineConfig } from 'keel';\nimport gitGuard from 'keel-plugin-git-guard';\n\nexport default defineConfig({ plugins: [gitGuard()] });\n",
  );
  const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init');
}, 180_000);
afterAll(() => ws?.cleanup());

describe('a packed third-party plugin', () => {
  it("runs its own tests", () => {
    const out = execFileSync(process.execPath, ['--test', 'test/'], { cwd: example, encoding: 'utf8' });
    expect(out).toMatch(/# fail 0/);
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
      const child = spawn(process.execPath, [path.join(project, 'node_modules', 'keel', 'bin', 'keel.js'), '-p', 'ship it', '--trust', '--permission-mode', 'auto'], {
        cwd: project,
        env: { PATH: process.env.PATH, HOME: ws.home, KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' },
      });
      child.stdin!.end();
      const run = await collect(child, 60_000);
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
});
