/**
 * A real Redis for a test: `redis-server` on a free loopback port in a temp folder, append-only file on, no RDB
 * snapshots. `restart()` stops it gracefully (the AOF is written) and starts it again on the same port and folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestRedis {
  url: string;
  port: number;
  dir: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  cleanup(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '', '--protected-mode', 'yes'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Ready to accept connections')) {
          proc.stdout!.off('data', onData);
          proc.stdout!.resume();
          resolve();
        }
      };
      proc.stdout!.on('data', onData);
      proc.on('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
    });
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    stop,
    start,
    restart: async () => {
      await stop();
      await start();
    },
    cleanup: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
