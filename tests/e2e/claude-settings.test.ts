/** Claude Code's settings files as config layers, through the built CLI. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';
import { mapRule } from '../../plugins/claude-settings/map.js';

const prepare = useScriptedProjects();

function results(s: ScriptedServer): Record<string, { content: unknown; is_error?: boolean }> {
  const out: Record<string, { content: unknown; is_error?: boolean }> = {};
  for (const r of s.messageRequests()) for (const m of r.body.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') out[b.tool_use_id] = b;
  return out;
}
const text = (r: { content: unknown } | undefined) => (typeof r?.content === 'string' ? r.content : JSON.stringify(r?.content ?? ''));

describe('rule mapping', () => {
  it("maps Claude Code's tool names and path forms to Keel's", () => {
    expect(mapRule('Bash(npm run test:*)')).toBe('bash(npm run test:*)');
    expect(mapRule('Read(./secrets/**)')).toBe('read_file(secrets/**)');
    expect(mapRule('Edit(/src/**)')).toBe('edit_file(src/**)');
    expect(mapRule('Read(//etc/hosts)')).toBe('read_file(/etc/hosts)');
    expect(mapRule('Read(~/notes/*)')).toBe('read_file(~/notes/*)');
    expect(mapRule('WebFetch(domain:example.com)')).toBe('web_fetch(domain:example.com)');
    expect(mapRule('Task')).toBe('agent');
    expect(mapRule('mcp__github__create_issue')).toBe('mcp__github__create_issue');
  });
});

describe('.claude/settings.json', () => {
  it('project rules apply in a trusted folder: an allowed Bash command runs in ask mode, a denied Read is refused', async () => {
    const { env, ws, server } = await prepare([callTool('bash', { command: 'echo hello from bash' }, 'b1'), callTool('read_file', { path: 'secret.txt' }, 'r1'), say('ok')]);
    ws.write('secret.txt', 'TOP SECRET');
    ws.write('.claude/settings.json', JSON.stringify({ permissions: { allow: ['Bash(echo:*)'], deny: ['Read(./secret.txt)'] } }));
    const run = await runKeel(['-p', 'go', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(results(server).b1?.is_error).toBeFalsy();
    expect(text(results(server).b1)).toContain('hello from bash');
    expect(results(server).r1).toMatchObject({ is_error: true });
    expect(text(results(server).r1)).toContain('read_file(secret.txt)');
    expect(JSON.stringify(server.messageRequests().map((r) => r.body))).not.toContain('TOP SECRET');
  });

  it('an untrusted folder ignores the project settings (no allow rules, no hooks)', async () => {
    const { env, ws, server } = await prepare([callTool('bash', { command: 'echo hello > out.txt' }, 'b1'), say('ok')]);
    const marker = path.join(ws.home, 'hook-ran');
    ws.write('.claude/settings.json', JSON.stringify({ permissions: { allow: ['Bash'] }, hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${marker}` }] }] } }));
    const run = await runKeel(['-p', 'go'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(results(server).b1?.is_error).toBe(true);
    expect(existsSync(ws.path('out.txt'))).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it('settings.local.json wins over settings.json; hooks from settings run; env reaches bash; the user file applies everywhere', async () => {
    const { env, ws, server } = await prepare([callTool('bash', { command: 'printenv GREETING FROM_USER' }, 'b1'), say('ok')]);
    const marker = path.join(ws.home, 'hook-ran');
    const fakeHome = path.join(ws.home, 'fake-home');
    mkdirSync(path.join(fakeHome, '.claude'), { recursive: true });
    writeFileSync(path.join(fakeHome, '.claude', 'settings.json'), JSON.stringify({ env: { FROM_USER: 'from-user' }, permissions: { allow: ['Bash(printenv:*)'] } }));
    ws.write('.claude/settings.json', JSON.stringify({ model: 'claude-from-settings', env: { GREETING: 'hi' }, hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${marker}` }] }] } }));
    ws.write('.claude/settings.local.json', JSON.stringify({ model: 'claude-from-local' }));
    const run = await runKeel(['-p', 'go', '--trust'], { cwd: ws.dir, env: { ...env, HOME: fakeHome } });
    expect(run.code).toBe(0);
    expect(server.messageRequests()[0]!.body.model).toBe('claude-from-local');
    expect(existsSync(marker)).toBe(true);
    expect(results(server).b1?.is_error).toBeFalsy();
    expect(text(results(server).b1)).toContain('hi\nfrom-user');
  });

  it('a broken settings file is a one-line error naming it', async () => {
    const { env, ws } = await prepare([say('ok')]);
    ws.write('.claude/settings.json', '{ "permissions": ');
    const run = await runKeel(['-p', 'go', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^keel: .*\.claude\/settings\.json: not valid JSON .*\n$/);
  });

  it('writing .claude/settings.json is always asked, even in auto mode', async () => {
    const { env, ws, server } = await prepare([callTool('write_file', { path: '.claude/settings.json', content: '{"permissions":{"allow":["Bash"]}}' }, 'w1'), say('ok')]);
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(results(server).w1?.is_error).toBe(true);
    expect(existsSync(ws.path('.claude/settings.json'))).toBe(false);
  });
});
