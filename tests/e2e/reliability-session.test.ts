/**
 * A poisoned session, through the built CLI: a content block the API would refuse is refused before it is saved,
 * and a prompt the API refuses as invalid (400 invalid_request_error) is not kept, so later turns and resumes work.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { plainMessages, say } from '../helpers/anthropic-server.js';
import { cleanEnv, KEEL_BIN, runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** An SDK host over the child's pipes. */
function sdkHost(cwd: string, env: Record<string, string>) {
  const child = spawn(KEEL_BIN, ['--input-format', 'stream-json', '--output-format', 'stream-json'], { cwd, env: cleanEnv(env), stdio: 'pipe' });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const seen: any[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    seen.push(JSON.parse(line));
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    seen,
    stderr: () => stderr,
    exited,
    send: (content: unknown) => child.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: '' })}\n`),
    end: () => child.stdin.end(),
    async next(match: (m: any) => boolean): Promise<any> {
      for (;;) {
        const index = seen.findIndex(match);
        if (index >= 0) return seen.splice(index, 1)[0];
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

describe('an SDK host sends a content block the API would refuse', () => {
  it('is answered with system/error naming the block, nothing is sent or saved, and the session goes on', async () => {
    const { env, ws, server } = await prepare([say('fine'), say('still fine')]);
    const host = sdkHost(ws.dir, env);
    host.send([{ type: 'text', text: 'look' }, { type: 'mystery_block', payload: 1 }]);
    const refused = await host.next((m) => m.type === 'system' && m.subtype === 'error');
    expect(refused.error).toBe(
      'stdin line 1: message.content[1]: unknown content block type "mystery_block" (a user message accepts text, image, document, search_result, tool_result); the message was not sent or saved',
    );
    host.send([{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'Qk0=' } }]);
    expect((await host.next((m) => m.type === 'system' && m.subtype === 'error')).error).toMatch(/^stdin line 2: message\.content\[0\]\.source\.media_type \(a "image" block\): /);
    host.send('hello');
    expect(await host.next((m) => m.type === 'result')).toMatchObject({ is_error: false, result: 'fine' });
    host.end();
    expect(await host.exited).toBe(0);
    expect(server.messageRequests()).toHaveLength(1);
    // A resume carries only what was accepted.
    const resumed = await runKeel(['-p', 'again', '--continue'], { cwd: ws.dir, env });
    expect(resumed.code).toBe(0);
    expect(plainMessages(server.messageRequests()[1]!.body.messages)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: [{ type: 'text', text: 'fine' }] },
      { role: 'user', content: 'again' },
    ]);
  });
});

describe('a prompt the API refuses as invalid (400 invalid_request_error)', () => {
  it('headless: the run fails saying the prompt was not kept; --continue works without it', async () => {
    const { env, ws, server } = await prepare([say('first'), { status: 400, errorMessage: 'messages.2.content.0: unexpected block' }, say('after')]);
    expect((await runKeel(['-p', 'one'], { cwd: ws.dir, env })).code).toBe(0);
    const refused = await runKeel(['-p', 'the poisoned prompt', '--continue'], { cwd: ws.dir, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'keel: the Anthropic API refused the request: HTTP 400 invalid_request_error: messages.2.content.0: unexpected block (the prompt was not kept in the session)\n',
    );
    const next = await runKeel(['-p', 'two', '--continue'], { cwd: ws.dir, env });
    expect(next.code).toBe(0);
    expect(next.stdout).toBe('after\n');
    expect(plainMessages(server.messageRequests()[2]!.body.messages)).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: [{ type: 'text', text: 'first' }] },
      { role: 'user', content: 'two' },
    ]);
  });

  it('SDK mode: the refused turn reports it, and the next turn in the same session goes out without it', async () => {
    const { env, ws, server } = await prepare([{ status: 400, errorMessage: 'bad prompt' }, say('recovered')]);
    const host = sdkHost(ws.dir, env);
    host.send('the poisoned prompt');
    expect(await host.next((m) => m.type === 'result')).toMatchObject({ is_error: true });
    host.send('a good one');
    expect(await host.next((m) => m.type === 'result')).toMatchObject({ is_error: false, result: 'recovered' });
    host.end();
    expect(await host.exited).toBe(0);
    expect(plainMessages(server.messageRequests()[1]!.body.messages)).toEqual([{ role: 'user', content: 'a good one' }]);
  });
});
