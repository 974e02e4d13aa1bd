import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { ndjson, runKeel } from '../helpers/cli.js';

const prepare = useScriptedProjects();

function lastResult(request: RecordedRequest): { content: unknown; is_error?: boolean } {
  const messages = request.body.messages as Array<{ content: Array<{ type: string; content: unknown; is_error?: boolean }> }>;
  return messages[messages.length - 1].content.find((b) => b.type === 'tool_result')!;
}
const names = (r: RecordedRequest) => (r.body.tools as Array<{ name: string }>).map((t) => t.name);
const systemText = (r: RecordedRequest) => (r.body.system as Array<{ text: string }>).map((b) => b.text).join('\n');

const PLAN = '1. Add `greet()` to src/greet.ts\n2. Test it in tests/greet.test.ts';

describe('plan mode (--permission-mode plan)', () => {
  it('refuses a write and a command, and prints the plan exit_plan_mode carries as the result', async () => {
    const { env, ws, server } = await prepare([
      callTool('read_file', { path: 'README.md' }),
      callTool('write_file', { path: 'src/greet.ts', content: 'export {}' }),
      callTool('bash', { command: 'touch made-by-bash' }),
      callTool('exit_plan_mode', { plan: PLAN }),
      say('never asked for'),
    ]);
    ws.write('README.md', '# demo\n');
    const run = await runKeel(['-p', 'plan a greet function', '--permission-mode', 'plan'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${PLAN}\n`);
    const requests = server.messageRequests();
    expect(requests).toHaveLength(4);
    expect(lastResult(requests[1]).is_error).toBeUndefined();
    for (const i of [2, 3]) {
      expect(lastResult(requests[i])).toMatchObject({ is_error: true, content: expect.stringContaining('plan mode runs only read-level tools') });
    }
    expect(existsSync(ws.path('src/greet.ts'))).toBe(false);
    expect(existsSync(ws.path('made-by-bash'))).toBe(false);
    expect(names(requests[0])).toContain('exit_plan_mode');
    expect(systemText(requests[0])).toContain('Plan mode is on');
    expect(server.remaining()).toBe(1);
  });

  it('reports the plan as the json result, and leaves exit_plan_mode out of requests outside plan mode', async () => {
    const { env, ws, server } = await prepare([callTool('exit_plan_mode', { plan: PLAN })]);
    const run = await runKeel(['-p', 'plan it', '--permission-mode', 'plan', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(ndjson(run.stdout)[0]).toMatchObject({ type: 'result', subtype: 'success', result: PLAN });

    server.push(say('fine'));
    const plain = await runKeel(['-p', 'hello', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(plain.code).toBe(0);
    const last = server.messageRequests().at(-1)!;
    expect(names(last)).not.toContain('exit_plan_mode');
    expect(systemText(last)).not.toContain('Plan mode is on');
  }, 90_000);

  it('rejects an unknown mode, naming the flag and listing plan among the modes', async () => {
    const { env, ws } = await prepare([]);
    const bad = await runKeel(['-p', 'hi', '--permission-mode', 'planning'], { cwd: ws.dir, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--permission-mode');
    expect(bad.stderr).toContain('plan');
  });
});
