/**
 * Streams and connections that misbehave, through the built CLI: bodies that do not end after `message_stop`,
 * kept-alive connections the server closed, protocol errors that must keep their cause.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ndjson, runKeel } from '../helpers/cli.js';
import { chunkedResponse, lengthResponse, sseMessage, startRawAnthropic, type RawAnswer, type RawAnthropicServer, type RawConnection } from '../helpers/raw-anthropic.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const live: Array<{ server: RawAnthropicServer; ws: Workspace }> = [];
afterEach(async () => {
  for (const { server, ws } of live.splice(0)) {
    await server.close();
    ws.cleanup();
  }
});

async function project(answer: (n: number, conn: RawConnection) => RawAnswer, retry?: Record<string, number>) {
  const server = await startRawAnthropic(answer);
  const ws = makeWorkspace({ git: true });
  live.push({ server, ws });
  if (retry) writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ retry }));
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: ws.home };
  return { server, ws, env };
}

const toolCall = sseMessage([{ type: 'tool_use', id: 'toolu_ls', name: 'ls', input: { path: '.' } }]);
const answer = (text: string) => sseMessage([{ type: 'text', text }]);

describe('a body that does not end after message_stop', () => {
  it.each([
    ['a content-length that never fills', (body: string) => lengthResponse(body, 500)],
    ['chunked encoding without its last chunk', (body: string) => chunkedResponse(body, false)],
  ])('%s: message_stop completes the answer at once, and the connection is not reused', async (_name, frame) => {
    // Idle timeout 60 s (the default): waiting for the body's end would outlast the test.
    const { server, ws, env } = await project((n) => ({ bytes: [frame(n === 1 ? toolCall : answer('listed it'))] }));
    ws.write('a.txt', 'x');
    const run = await runKeel(['-p', 'list the files', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.stderr).not.toMatch(/keel:|retry|Retrying/i);
    expect(run.code).toBe(0);
    const lines = ndjson(run.stdout);
    expect(lines.filter((line) => line.subtype === 'api_retry')).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'listed it' });
    const messages = server.requests.filter((r) => r.head.startsWith('POST /v1/messages'));
    expect(messages).toHaveLength(2);
    // The unfinished connection was dropped, not kept: the second request went out on a new one.
    expect(messages[1]!.connection).not.toBe(messages[0]!.connection);
    await server.connections[messages[0]!.connection - 1]!.closed;
  });
});

describe('a kept-alive connection the server closed', () => {
  it('a request that dies before any response byte on a reused connection is sent again at once on a new one, without a retry', async () => {
    const { server, ws, env } = await project((n) => {
      if (n === 1) return { bytes: [chunkedResponse(toolCall)] };
      // The server closes the connection it kept alive as the second request arrives: no byte of an answer.
      if (n === 2) return { bytes: [], after: 'destroy' };
      return { bytes: [chunkedResponse(answer('done'))] };
    });
    const run = await runKeel(['-p', 'list the files', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.stderr).not.toMatch(/keel:|retry|Retrying/i);
    expect(run.code).toBe(0);
    const lines = ndjson(run.stdout);
    expect(lines.filter((line) => line.subtype === 'api_retry')).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'done' });
    const messages = server.requests.filter((r) => r.head.startsWith('POST /v1/messages'));
    expect(messages.map((r) => r.connection)).toEqual([1, 1, 2]);
    expect(messages[2]!.body).toBe(messages[1]!.body);
  });
});

describe('protocol errors keep their cause', () => {
  const fast = { maxRetries: 1, baseDelayMs: 1, firstByteTimeoutMs: 20_000 };
  it.each([
    ['a body shorter than its content-length', () => lengthResponse(answer('cut').slice(0, 120), 2000).replace(/content-length: \d+/, 'content-length: 2000'), /the response stream broke: the response body ended after 120 of 2000 bytes \(content-length\)/],
    ['a 1 MB response head', () => `HTTP/1.1 200 OK\r\nx-padding: ${'p'.repeat(1024 * 1024)}\r\n\r\n`, /the response head exceeds 64 KB/],
    ['a head whose lines end in bare LF', () => `HTTP/1.1 200 OK\ncontent-type: text/event-stream\ncontent-length: 10\n\n0123456789`, /malformed response head: its lines end in a bare LF instead of CRLF/],
  ])('%s: the error names it', async (_name, bytes, expected) => {
    const { ws, env } = await project(() => ({ bytes: [bytes()], after: 'end' }), fast);
    const run = await runKeel(['-p', 'hello'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(expected);
    expect(run.stderr).not.toMatch(/terminated|Connection error\.|no response within/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
