/**
 * A misbehaving ACP client: answers to Keel's requests that break the protocol (no outcome, an option Keel did not
 * offer, an error instead of a result, a reply to an id never asked) refuse the call and leave the session working;
 * nothing the client sends crashes `keel acp` or reaches the workspace's canary.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say } from '../../helpers/anthropic-server.js';
import { cleanEnv, KEEL_BIN } from '../../helpers/cli.js';
import { useScriptedProjects } from '../../helpers/project.js';

const prepare = useScriptedProjects();
const children: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Newline-delimited JSON-RPC over keel acp's stdio; `answer` replies to each request Keel sends the client. */
function rawAcp(cwd: string, env: Record<string, string>, answer: (message: Record<string, any>, index: number) => unknown) {
  const child = spawn(KEEL_BIN, ['acp'], { cwd, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let buffer = '';
  let asked = 0;
  let stderr = '';
  const waiters = new Map<number, (m: Record<string, any>) => void>();
  const nonJson: string[] = [];
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let at: number;
    while ((at = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      let message: Record<string, any>;
      try {
        message = JSON.parse(line);
      } catch {
        nonJson.push(line);
        continue;
      }
      if ('method' in message && 'id' in message) {
        const reply = answer(message, asked++);
        if (reply !== undefined) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, ...(reply as object) })}\n`);
      } else if ('id' in message) waiters.get(message.id)?.(message);
    }
  });
  let next = 0;
  const request = (method: string, params: unknown) =>
    new Promise<Record<string, any>>((resolve) => {
      const id = ++next;
      waiters.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  return { child, request, nonJson, stderr: () => stderr, write: (text: string) => child.stdin.write(text) };
}

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
