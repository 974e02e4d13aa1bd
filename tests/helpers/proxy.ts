/** tinyproxy (Debian's package) started by a test on a free port, with its log read to see what went through it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './mcp.js';

export interface TinyProxy {
  port: number;
  /** `http://127.0.0.1:port`, with the credentials when given. */
  url(credentials?: string): string;
  /** The request lines it logged: `CONNECT 127.0.0.1:4433 HTTP/1.1`, `GET http://… HTTP/1.1`. */
  requests(): string[];
  stop(): Promise<void>;
}

export interface TinyProxyOptions {
  /** `BasicAuth user password`: requests without these credentials get 407. */
  auth?: { user: string; password: string };
  /** Ports CONNECT may reach (tinyproxy refuses the others with 403); any port when absent. */
  connectPorts?: number[];
}

/** Resolves once tinyproxy accepts connections; its config and log live in a temp folder removed by stop(). */
export async function startTinyproxy(opts: TinyProxyOptions = {}): Promise<TinyProxy> {
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-proxy-'));
  const port = await freePort();
  const log = path.join(dir, 'tinyproxy.log');
  const lines = [`Port ${port}`, 'Listen 127.0.0.1', 'Allow 127.0.0.1', `LogFile "${log}"`, 'LogLevel Info', 'MaxClients 50', 'Timeout 60'];
  for (const p of opts.connectPorts ?? []) lines.push(`ConnectPort ${p}`);
  if (opts.auth) lines.push(`BasicAuth ${opts.auth.user} ${opts.auth.password}`);
  writeFileSync(path.join(dir, 'tinyproxy.conf'), `${lines.join('\n')}\n`);
  const child: ChildProcess = spawn('tinyproxy', ['-d', '-c', path.join(dir, 'tinyproxy.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await listening(port, child, () => stderr);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port,
    url: (credentials) => `http://${credentials ? `${credentials}@` : ''}127.0.0.1:${port}`,
    requests: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .map((line) => /Request \(file descriptor \d+\): (.*)$/.exec(line)?.[1])
            .filter((line): line is string => Boolean(line))
        : [],
    stop,
  };
}

/** Tries to connect until tinyproxy answers (it forks nothing in the foreground; its exit fails the wait). */
async function listening(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`tinyproxy exited with ${child.exitCode}: ${stderr()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`tinyproxy did not listen on ${port}: ${stderr()}`);
}
