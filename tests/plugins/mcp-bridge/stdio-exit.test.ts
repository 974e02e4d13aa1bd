/**
 * A stdio server that dies at start: the first write to it fails with EPIPE before its exit is seen. What the user
 * reads is why it died (its exit code and last line on stderr), never "write EPIPE", however the race falls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupStdioTransport } from '../../../plugins/mcp-bridge/stdio.js';

const dirs: string[] = [];
const transports: GroupStdioTransport[] = [];
afterEach(async () => {
  for (const t of transports.splice(0)) await t.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function transport(script: string): GroupStdioTransport {
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-mcp-exit-'));
  dirs.push(dir);
  const t = new GroupStdioTransport({ command: 'sh', args: ['-c', script], env: {}, logFile: path.join(dir, 'server.log'), maxLogBytes: 1 << 20, maxMessageBytes: 1 << 20 });
  transports.push(t);
  return t;
}

const initialize = { jsonrpc: '2.0' as const, id: 1, method: 'initialize', params: {} };

describe('a stdio server that dies at start', () => {
  it('a write that finds the pipe closed fails with the exit code and the last stderr line', async () => {
    // stdin closed at once, the exit 300 ms later: the write's EPIPE comes first.
    const t = transport('exec 0<&-; echo "faulty: cannot open my database" >&2; sleep 0.3; exit 7');
    const errors: string[] = [];
    t.onerror = (err) => errors.push(err.message);
    await t.start();
    // Until the shell has closed its stdin, a write may still go into the pipe's buffer: write until one fails.
    let failure: Error | undefined;
    for (let i = 0; i < 50 && !failure; i++) failure = await t.send(initialize).then(() => undefined, (err: Error) => err);
    expect(failure?.message).toBe('the server exited (code 7); its last line on stderr: faulty: cannot open my database');
    expect(errors.join('\n')).not.toContain('EPIPE');
  });

  it('after the exit, a write says the transport is closed', async () => {
    const t = transport('exit 3');
    const closed = new Promise<void>((resolve) => (t.onclose = resolve));
    await t.start();
    await closed;
    await expect(t.send(initialize)).rejects.toThrow('not connected');
  });
});
