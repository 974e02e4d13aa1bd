/** `keel acp` driven by raw newline-delimited JSON-RPC (no SDK client), for clients that break the protocol. */
import { spawn, type ChildProcess } from 'node:child_process';
import { cleanEnv, KEEL_BIN } from './cli.js';

/** Newline-delimited JSON-RPC over keel acp's stdio; `answer` replies to each request Keel sends the client. */
export function rawAcp(cwd: string, env: Record<string, string>, answer: (message: Record<string, any>, index: number) => unknown, children: ChildProcess[] = []) {
  const child = spawn(KEEL_BIN, ['acp'], { cwd, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let buffer = '';
  let asked = 0;
  let stderr = '';
  const waiters = new Map<number, (m: Record<string, any>) => void>();
  const nonJson: string[] = [];
  const outOfBand: Array<Record<string, any>> = [];
  /** Every message Keel wrote, in order (notifications and Keel's own requests included). */
  const messages: Array<Record<string, any>> = [];
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
      messages.push(message);
      if ('method' in message && 'id' in message) {
        const reply = answer(message, asked++);
        if (reply !== undefined) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, ...(reply as object) })}\n`);
      } else if ('id' in message) {
        waiters.get(message.id)?.(message);
        if (message.id === null) outOfBand.push(message);
      }
    }
  });
  let next = 0;
  const request = (method: string, params: unknown) =>
    new Promise<Record<string, any>>((resolve) => {
      const id = ++next;
      waiters.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // Keel stops reading when it gives up on a line: writes after that fail with EPIPE, which is expected.
  child.stdin.on('error', () => undefined);
  return { child, request, messages, nonJson, stderr: () => stderr, stdout: () => buffer, outOfBand, exited, write: (text: string) => child.stdin.write(text), waiters };
}

export type RawAcp = ReturnType<typeof rawAcp>;
