/**
 * A misbehaving ACP client: answers to Keel's requests that break the protocol (no outcome, an option Keel did not
 * offer, an error instead of a result, a reply to an id never asked) refuse the call and leave the session working;
 * nothing the client sends crashes `keel acp` or reaches the workspace's canary.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say } from '../../helpers/anthropic-server.js';
import { rawAcp as spawnRaw } from '../../helpers/acp-raw.js';
import { useScriptedProjects } from '../../helpers/project.js';
import { ACP_MAX_MESSAGE_BYTES } from '../../../plugins/acp/line-limit.js';

const prepare = useScriptedProjects();
const children: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});
const rawAcp = (cwd: string, env: Record<string, string>, answer: (message: Record<string, any>, index: number) => unknown) => spawnRaw(cwd, env, answer, children);

describe('keel acp and a misbehaving client', () => {
  it('broken permission answers refuse the call; the session keeps working; stray replies and huge lines do not crash it', async () => {
    const replies = [
      { result: {} },
      { result: { outcome: { outcome: 'selected', optionId: 'allow_everything_forever' } } },
      { error: { code: -32603, message: 'editor exploded' } },
      { result: { outcome: 'selected' } },
    ];
    const calls = replies.map((_, i) => callTool('bash', { command: `touch made-${i}` }, `toolu_${i}`));
    const { ws, env, server } = await prepare([...calls, say('after the faults'), say('second prompt works')]);
    const acp = rawAcp(ws.dir, env, (message, index) => (message.method === 'session/request_permission' ? replies[index] : { error: { code: -32601, message: 'no' } }));
    await acp.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { result } = await acp.request('session/new', { cwd: ws.dir, mcpServers: [] });
    // A reply to a request Keel never made, and a 4 MB line of garbage.
    acp.write(`${JSON.stringify({ jsonrpc: '2.0', id: 987654, result: { outcome: { outcome: 'selected', optionId: 'allow_always' } } })}\n`);
    acp.write(`${'x'.repeat(4 * 1024 * 1024)}\n`);
    const prompted = await acp.request('session/prompt', { sessionId: result.sessionId, prompt: [{ type: 'text', text: 'go' }] });
    expect(prompted.result).toEqual({ stopReason: 'end_turn' });
    for (let i = 0; i < replies.length; i++) expect(existsSync(path.join(ws.dir, `made-${i}`))).toBe(false);
    const again = await acp.request('session/prompt', { sessionId: result.sessionId, prompt: [{ type: 'text', text: 'again' }] });
    expect(again.result).toEqual({ stopReason: 'end_turn' });
    expect(server.messageRequests()).toHaveLength(replies.length + 2);
    expect(acp.child.exitCode).toBe(null);
    expect(acp.nonJson).toEqual([]);
  });
});

describe("keel acp and a client that answers ask_user_question's choices with options it was not offered", () => {
  it('counts such an answer as no answer, never as the user picking it; an offered option still answers', async () => {
    const { ws, env, server } = await prepare([
      callTool('ask_user_question', {
        questions: [
          { question: 'Which database?', header: 'Database', options: [{ label: 'Postgres' }, { label: 'SQLite' }] },
          { question: 'Add tests?', header: 'Tests', options: [{ label: 'Yes' }, { label: 'No' }] },
          { question: 'Which port?', header: 'Port', options: [{ label: '8080' }, { label: '3000' }] },
        ],
      }),
      say('ok'),
    ]);
    const picks = ['drop all tables', '7', '1'];
    const acp = rawAcp(ws.dir, env, (message, index) =>
      message.method === 'session/request_permission' ? { result: { outcome: { outcome: 'selected', optionId: picks[index] } } } : { error: { code: -32601, message: 'no' } },
    );
    await acp.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { result } = await acp.request('session/new', { cwd: ws.dir, mcpServers: [] });
    expect((await acp.request('session/prompt', { sessionId: result.sessionId, prompt: [{ type: 'text', text: 'ask me' }] })).result).toEqual({ stopReason: 'end_turn' });
    const sent = JSON.stringify(server.messageRequests()[1]!.body.messages);
    expect(sent).not.toContain('drop all tables');
    expect(sent).toContain('Which database?\\n→ (no answer)');
    expect(sent).toContain('Add tests?\\n→ (no answer)');
    expect(sent).toContain('Which port?\\n→ 3000');
    expect(acp.stderr()).toContain('keel: acp: the editor answered "Which database?" with an option it was not offered ("drop all tables"); the question counts as unanswered');
  });
});

/** A process's memory high-water mark in KiB (VmHWM), or undefined once it is gone. */
function highWaterKiB(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

describe('keel acp and a line that never ends', () => {
  const limitText = `${ACP_MAX_MESSAGE_BYTES / (1024 * 1024)} MiB (${ACP_MAX_MESSAGE_BYTES} bytes)`;

  it('six times the cap without a newline: one line on stderr, a JSON-RPC error, exit 1, memory bounded', async () => {
    const { ws, env, server } = await prepare([say('never asked')]);
    const acp = rawAcp(ws.dir, env, () => ({ error: { code: -32601, message: 'no' } }));
    await acp.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const before = highWaterKiB(acp.child.pid!)!;
    let peak = before;
    let watching = true;
    const watch = (async () => {
      // VmHWM only grows: the last value read before the process ends is its peak so far.
      while (watching) {
        peak = Math.max(peak, highWaterKiB(acp.child.pid!) ?? peak);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    let sent = 0;
    const stdin = acp.child.stdin;
    while (!stdin.destroyed && sent < 6 * ACP_MAX_MESSAGE_BYTES) {
      sent += chunk.byteLength;
      if (stdin.write(chunk)) continue;
      const drained = new Promise((resolve) => stdin.once('drain', resolve));
      await Promise.race([drained, acp.exited]);
    }
    const code = await acp.exited;
    watching = false;
    await watch;
    expect(code).toBe(1);
    const lines = acp.stderr().trim().split('\n').filter((line) => line.startsWith('keel: acp:'));
    expect(lines).toEqual([`keel: acp: a message is longer than ${limitText}, the limit for one line of the protocol; the connection is closed`]);
    expect(acp.stderr()).not.toMatch(/\n\s+at /);
    expect(acp.outOfBand).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining(`longer than ${limitText}`) } }]);
    expect(acp.nonJson).toEqual([]);
    // It stopped reading at the cap: it holds the cap's worth, with the copies the SDK's reader makes while its buffer
    // grows and is decoded (measured up to 3.2 times the cap on Node 24), never the six times that were on their way.
    expect(sent).toBeLessThan(3 * ACP_MAX_MESSAGE_BYTES);
    expect(peak - before).toBeLessThan((4 * ACP_MAX_MESSAGE_BYTES) / 1024);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('a message of exactly the cap is served; one byte more ends the connection before anything of it runs', async () => {
    const { ws, env, server } = await prepare([say('served at the cap'), say('never asked')]);
    const acp = rawAcp(ws.dir, env, () => ({ error: { code: -32601, message: 'no' } }));
    await acp.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { result } = await acp.request('session/new', { cwd: ws.dir, mcpServers: [] });
    // A prompt whose JSON line is `bytes` long, padded in `_meta` (which ACP lets any message carry).
    const promptLine = (id: number, bytes: number) => {
      const shape = (pad: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'session/prompt', params: { sessionId: result.sessionId, prompt: [{ type: 'text', text: 'go' }], _meta: { pad } } });
      return shape('x'.repeat(bytes - shape('').length));
    };
    const atCap = promptLine(101, ACP_MAX_MESSAGE_BYTES);
    expect(Buffer.byteLength(atCap)).toBe(ACP_MAX_MESSAGE_BYTES);
    const answered = new Promise<Record<string, any>>((resolve) => acp.waiters.set(101, resolve));
    acp.write(`${atCap}\n`);
    expect((await answered).result).toEqual({ stopReason: 'end_turn' });
    expect(server.messageRequests()).toHaveLength(1);

    acp.write(`${promptLine(102, ACP_MAX_MESSAGE_BYTES + 1)}\n`);
    expect(await acp.exited).toBe(1);
    expect(acp.stderr()).toContain(`keel: acp: a message is longer than ${limitText}`);
    expect(acp.outOfBand).toHaveLength(1);
    expect(server.messageRequests()).toHaveLength(1);
  });
});
