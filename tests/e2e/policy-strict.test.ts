/** The policy-strict preset through the built CLI: a policy swapped in by name. */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();

function results(s: ScriptedServer): Record<string, { content: unknown; is_error?: boolean }> {
  const out: Record<string, { content: unknown; is_error?: boolean }> = {};
  for (const r of s.messageRequests()) for (const m of r.body.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') out[b.tool_use_id] = b;
  return out;
}

describe('--preset policy-strict', () => {
  it('asks for every call even under --permission-mode auto, and offers no network tool', async () => {
    const { env, ws, server } = await prepare([callTool('read_file', { path: 'README.md' }, 'r1'), callTool('write_file', { path: 'a.txt', content: 'x' }, 'w1'), say('ok')]);
    ws.write('README.md', 'hello');
    const run = await runKeel(['-p', 'go', '--preset', 'policy-strict', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(results(server).r1?.is_error).toBe(true);
    expect(results(server).w1?.is_error).toBe(true);
    expect(existsSync(ws.path('a.txt'))).toBe(false);
    const tools = server.messageRequests()[0]!.body.tools.map((t: { name: string }) => t.name);
    expect(tools).not.toContain('web_fetch');
    expect(tools).toContain('bash');
  });

  it('runs an allowed bash command inside the sandbox although the config turns it off', async () => {
    const { env, ws, server } = await prepare([callTool('bash', { command: 'printenv KEEL_SANDBOX' }, 'b1'), say('ok')]);
    ws.write('agent.config.json', JSON.stringify({ sandbox: { enabled: false }, permissions: { allow: ['bash(printenv:*)'] } }));
    const run = await runKeel(['-p', 'go', '--preset', 'policy-strict', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(JSON.stringify(results(server).b1?.content)).toBe('"1"');
  });
});
