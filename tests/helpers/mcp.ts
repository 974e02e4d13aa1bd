/** MCP servers for the bridge's tests: the npm servers, the test server, and process bookkeeping. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

export const TEST_SERVER = path.resolve(here, '../plugins/mcp-bridge/fixtures/test-server.mjs');
export const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
export const FILESYSTEM = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')), 'dist', 'index.js');

/** A stdio server entry running the test server; `marker` (a temp path) lets the test find its processes. */
export function testServer(marker: string, ...args: string[]) {
  return { command: process.execPath, args: [TEST_SERVER, '--marker', marker, ...args] };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** server-everything over streamable HTTP (or legacy SSE) on 127.0.0.1; resolves once it listens. */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${err}`)), 20_000);
    child.stderr!.on('data', (d) => {
      err += d;
      if (err.includes('listening on port') || err.includes('running on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${err}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** Pids of running processes whose command line contains `text`. */
export function processesMentioning(text: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(text) && !line.includes('ps -eo'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Waits until no process mentions `text` (polling; the test's own timeout bounds it). Returns those left. */
export async function processesGone(text: string, attempts = 50): Promise<number[]> {
  for (let i = 0; i < attempts; i++) {
    const left = processesMentioning(text);
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
  return processesMentioning(text);
}

export const OAUTH_SERVER = path.resolve(here, '../plugins/mcp-bridge/fixtures/oauth-server.mjs');
export const FAKE_BROWSER = path.resolve(here, '../plugins/mcp-bridge/fixtures/fake-browser.mjs');

/** The OAuth-protected test server on 127.0.0.1; resolves once it listens. */
export async function startOAuthServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [OAUTH_SERVER], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the OAuth server did not start: ${err}`)), 20_000);
    child.stderr!.on('data', (d) => {
      err += d;
      if (err.includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`the OAuth server exited with ${code}: ${err}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
