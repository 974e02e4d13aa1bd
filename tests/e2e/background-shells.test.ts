import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest, type ScriptedServer } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { collect, runKeel, spawnKeel } from '../helpers/cli.js';
import { until } from '../helpers/until.js';

const prepare = useScriptedProjects();

function lastResult(request: RecordedRequest): { content: unknown; is_error?: boolean } {
  const messages = request.body.messages as Array<{ content: Array<{ type: string; content: unknown; is_error?: boolean }> }>;
  return messages[messages.length - 1].content.find((b) => b.type === 'tool_result')!;
}
const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));

/** Waits (polling) until `check` holds; fails with `what` after a generous bound. */
const running = (marker: string) => spawnSync('pgrep', ['-f', marker]).status === 0;
const count = (file: string) => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim() || 0) : 0);
const ticks = (output: string) => [...output.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));

/** A loop that prints `tick N` and writes N to count.txt, until killed; its sleep carries a unique marker. */
function loopCommand(marker: string): string {
  return `i=0; while true; do i=$((i+1)); echo "tick $i"; echo $i > count.txt; sleep 0.${marker}; done`;
}

describe('background shells', () => {
  it('starts a loop, reads it twice with bash_output, kills it with kill_shell, and leaves no process', async () => {
    const marker = String(Math.floor(Math.random() * 9e5) + 1e5);
    let project: { ws: { path(p: string): string } } | undefined;
    const countFile = () => project!.ws.path('count.txt');
    const { env, ws, server } = await prepare([
      callTool('bash', { command: loopCommand(marker), run_in_background: true }),
      // Each read comes once the loop has printed more than the previous read saw.
      { ...callTool('bash_output', { shell_id: 'bash_1' }), beforeEvent: async () => void (await until(() => count(countFile()) >= 2, 'two ticks')) },
      {
        ...callTool('bash_output', { shell_id: 'bash_1', filter: 'tick [0-9]*[02468]$' }),
        beforeEvent: async ({ request }) => {
          const seen = Math.max(...ticks(text(lastResult(request).content)));
          await until(() => count(countFile()) >= seen + 3, 'three more ticks');
        },
      },
      callTool('kill_shell', { shell_id: 'bash_1' }),
      callTool('bash_output', { shell_id: 'bash_1' }),
      say('done'),
    ]);
    project = { ws };
    const run = await runKeel(['-p', 'run the loop in the background', '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const requests = server.messageRequests();
    expect(text(lastResult(requests[1]).content)).toMatch(/^Started in the background as bash_1 \(pid \d+\)/);
    // bash_output and kill_shell are sent once a background shell exists, not before.
    const names = (r: RecordedRequest) => (r.body.tools as Array<{ name: string }>).map((t) => t.name);
    expect(names(requests[0])).not.toContain('bash_output');
    expect(names(requests[1])).toEqual(expect.arrayContaining(['bash_output', 'kill_shell']));

    const first = text(lastResult(requests[2]).content);
    expect(first).toContain('tick 1\ntick 2');
    expect(first).toContain('[bash_1 running]');
    const second = text(lastResult(requests[3]).content);
    const firstTicks = ticks(first);
    const secondTicks = ticks(second);
    // Only output since the last read, filtered to even ticks.
    expect(secondTicks.length).toBeGreaterThan(0);
    expect(Math.min(...secondTicks)).toBeGreaterThan(Math.max(...firstTicks));
    expect(secondTicks.every((n) => n % 2 === 0)).toBe(true);
    expect(text(lastResult(requests[4]).content)).toContain('Killed bash_1');
    expect(text(lastResult(requests[5]).content)).toMatch(/\[bash_1 killed\]$/);
    expect(running(`sleep 0.${marker}`)).toBe(false);
  }, 90_000);

  it('kills a background shell still running when the session ends', async () => {
    const marker = String(Math.floor(Math.random() * 9e5) + 1e5);
    const { env, ws } = await prepare([callTool('bash', { command: loopCommand(marker), run_in_background: true }), say('left it running')]);
    const run = await runKeel(['-p', 'start it', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('left it running\n');
    await until(() => !running(`sleep 0.${marker}`), 'the loop to be gone');
  });

  it('kills background shells when the run is interrupted with SIGINT', async () => {
    const marker = String(Math.floor(Math.random() * 9e5) + 1e5);
    const { env, ws, server } = await prepare([
      callTool('bash', { command: loopCommand(marker), run_in_background: true }),
      { fault: 'hang' },
    ]);
    const child = spawnKeel(['-p', 'start it', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    const done = collect(child);
    await until(() => server.messageRequests().length === 2 && running(`sleep 0.${marker}`), 'the second request with the loop running');
    child.kill('SIGINT');
    const run = await done;
    expect(run.code).toBe(130);
    await until(() => !running(`sleep 0.${marker}`), 'the loop to be gone');
  });

  it('asks before a background command like a foreground one, and refuses unknown shells and bad filters', async () => {
    const { env, ws, server } = await prepare([
      callTool('bash', { command: 'echo hi', run_in_background: true }),
      callTool('bash_output', { shell_id: 'bash_9' }),
      say('ok'),
    ]);
    const run = await runKeel(['-p', 'start it', '--permission-mode', 'ask'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const requests = server.messageRequests();
    expect(lastResult(requests[1])).toMatchObject({ is_error: true, content: expect.stringContaining('needs the user') });
    expect(lastResult(requests[2])).toMatchObject({ is_error: true, content: 'No background shell "bash_9" in this session.' });
  });

  it('reports an invalid filter and lists shells with /bashes', async () => {
    const { env, ws, server } = await prepare([
      callTool('bash', { command: 'echo started; echo done-here', run_in_background: true }),
      callTool('bash_output', { shell_id: 'bash_1', filter: '(' }),
      say('ok'),
    ]);
    const run = await runKeel(['-p', 'start it', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(lastResult(server.messageRequests()[2])).toMatchObject({ is_error: true, content: expect.stringContaining('bash_output: filter is not a valid regular expression') });
    const list = await runKeel(['-p', '/bashes'], { cwd: ws.dir, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toBe('No background shells in this session.\n');
    const bad = await runKeel(['-p', '/bashes kill bash_4'], { cwd: ws.dir, env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('No background shell "bash_4"');
  }, 90_000);
});
