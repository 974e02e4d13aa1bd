/**
 * A third-party preset as a user meets it: examples/keel-preset-reviewer and Keel itself are packed with
 * `npm pack`, both tarballs are installed into a temp project whose agent.config.ts says
 * `preset: 'keel-preset-reviewer'`, and the installed `keel` binary, against the scripted Anthropic server, offers
 * the model no write tools, refuses a scripted write and lets reads run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, say, startAnthropicServer } from '../helpers/anthropic-server.js';
import { collect } from '../helpers/cli.js';
import { installPacked, REPO_ROOT } from '../helpers/pack.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const example = path.join(REPO_ROOT, 'examples', 'keel-preset-reviewer');
let ws: Workspace;
let keel: string;

function runInstalled(args: string[], extraEnv: Record<string, string> = {}) {
  const child = spawn(process.execPath, [keel, ...args], {
    cwd: ws.path('app'),
    env: { PATH: process.env.PATH, HOME: ws.home, KEEL_HOME: ws.home, NO_COLOR: '1', ...extraEnv },
  });
  child.stdin!.end();
  return collect(child, 60_000);
}

beforeAll(() => {
  ws = makeWorkspace();
  const project = ws.path('app');
  keel = installPacked(ws.path('packs'), project, [example]);
  writeFileSync(path.join(project, 'agent.config.ts'), "import { defineConfig } from 'keel';\n\nexport default defineConfig({ preset: 'keel-preset-reviewer' });\n");
  writeFileSync(path.join(project, 'notes.md'), 'Ship on Fridays.\n');
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: project, stdio: 'ignore' });
}, 180_000);
afterAll(() => ws?.cleanup(), 120_000);

describe('a packed third-party preset named in agent.config.ts', () => {
  it('runs its own tests', () => {
    const out = execFileSync(process.execPath, ['--test', '--test-reporter=tap'], { cwd: example, encoding: 'utf8' });
    expect(out).toMatch(/# fail 0/);
  });

  it('offers only read tools, refuses a scripted write even in auto mode, and lets a read run', async () => {
    const server = await startAnthropicServer([
      callTool('write_file', { path: 'fix.md', content: 'patched\n' }, 'write'),
      callTool('bash', { command: 'touch ran.txt' }, 'bash'),
      callTool('read_file', { path: 'notes.md' }, 'read'),
      say('Finding: shipping on Fridays is risky.'),
    ]);
    try {
      const run = await runInstalled(['-p', 'review notes.md', '--trust', '--permission-mode', 'auto'], { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Finding: shipping on Fridays is risky.');
      const [first] = server.messageRequests();
      const tools = (first!.body.tools as Array<{ name: string }>).map((t) => t.name);
      expect(tools).toEqual(expect.arrayContaining(['read_file', 'grep', 'glob', 'ls']));
      for (const name of ['write_file', 'edit_file', 'bash', 'web_fetch', 'agent']) expect(tools).not.toContain(name);
      expect(JSON.stringify(first!.body.system)).toContain('You are reviewing code, not changing it.');
      const results: Record<string, { content: unknown; is_error?: boolean }> = {};
      for (const r of server.messageRequests()) for (const m of r.body.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') results[b.tool_use_id] = b;
      expect(results.write).toMatchObject({ is_error: true, content: expect.stringContaining('keel-preset-reviewer: write_file is a tool that can change files') });
      expect(results.bash).toMatchObject({ is_error: true, content: expect.stringContaining('bash is a tool that can run commands') });
      expect(results.read?.is_error).toBeFalsy();
      expect(JSON.stringify(results.read?.content)).toContain('Ship on Fridays.');
      expect(existsSync(ws.path('app/fix.md'))).toBe(false);
      expect(existsSync(ws.path('app/ran.txt'))).toBe(false);
    } finally {
      await server.close();
    }
  }, 90_000);

  it('keel plugins and keel config name the preset package and where it came from', async () => {
    expect((await runInstalled(['trust'])).code).toBe(0);
    const dir = path.join(ws.path('app'), 'node_modules', 'keel-preset-reviewer');
    const plugins = await runInstalled(['plugins']);
    expect(plugins.code).toBe(0);
    expect(plugins.stdout).toMatch(/\nreviewer\s+1\.0\.0\s+preset reviewer, package keel-preset-reviewer@1\.0\.0 \(/);
    expect(plugins.stdout).toContain(`${dir}; ${path.join(ws.path('app'), 'agent.config.ts')}: preset)`);
    const config = await runInstalled(['config']);
    expect(config.stdout).toContain(`preset = "reviewer"  (${path.join(ws.path('app'), 'agent.config.ts')}: preset, package keel-preset-reviewer@1.0.0 from ${dir})`);
  });
});
