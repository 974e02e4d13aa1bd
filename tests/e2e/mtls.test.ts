/**
 * Mutual TLS, through the binary: the scripted model server requires a client certificate signed by the test's
 * private CA (made with openssl); Keel presents the one named by CLAUDE_CODE_CLIENT_CERT / CLAUDE_CODE_CLIENT_KEY (or
 * config `network`), directly and through a proxy, and says in one line what is wrong with a bad one.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { startEverythingHttp } from '../helpers/mcp.js';
import { makePki, type Pki } from '../helpers/pki.js';
import { useScriptedProjects } from '../helpers/project.js';
import { startTinyproxy } from '../helpers/proxy.js';

const prepare = useScriptedProjects();
let pki: Pki;
const stops: Array<() => Promise<void>> = [];

beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.cleanup());
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** The model server over TLS, refusing clients without a certificate the test CA signed. */
async function mtlsProject(script: Parameters<typeof prepare>[0]) {
  const project = await prepare(script, { tls: { ...pki.server, ca: pki.ca, requestCert: true, rejectUnauthorized: true } });
  return { ...project, env: { ...project.env, NODE_EXTRA_CA_CERTS: pki.caFile } };
}

const withCert = () => ({ CLAUDE_CODE_CLIENT_CERT: pki.client.certFile, CLAUDE_CODE_CLIENT_KEY: pki.client.keyFile });

function toolResult(server: ScriptedServer, id: string): { text: string; isError?: boolean } {
  for (const request of server.messageRequests()) {
    for (const message of request.body.messages as Array<{ content: unknown }>) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as Array<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>) {
        if (block.type !== 'tool_result' || block.tool_use_id !== id) continue;
        const text = typeof block.content === 'string' ? block.content : (block.content as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n');
        return { text, isError: block.is_error };
      }
    }
  }
  throw new Error(`no tool result ${id}`);
}

describe('a server that requires a client certificate', () => {
  it('accepts the one CLAUDE_CODE_CLIENT_CERT and CLAUDE_CODE_CLIENT_KEY name', async () => {
    const { ws, env, server } = await mtlsProject([callTool('ls', { path: '.' }, 'ls'), say('mutual')]);
    const run = await runKeel(['-p', 'hi', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, ...withCert() } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('mutual\n');
    expect(server.messageRequests()).toHaveLength(2);
  });

  it('accepts a file holding both the certificate and its key, given alone', async () => {
    const both = path.join(pki.dir, 'client-both.pem');
    writeFileSync(both, readFileSync(pki.client.certFile, 'utf8') + readFileSync(pki.client.keyFile, 'utf8'));
    const { ws, env, server } = await mtlsProject([say('one file')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, CLAUDE_CODE_CLIENT_CERT: both } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('one file\n');
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('refuses a run without one: one line that says to set the client certificate, no retries', async () => {
    const { ws, env, server } = await mtlsProject([say('never')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/^keel: cannot reach the Anthropic API: the server refused the TLS handshake \([A-Z0-9_]+\); it likely requires a client certificate: set CLAUDE_CODE_CLIENT_CERT and CLAUDE_CODE_CLIENT_KEY, or config network\.clientCert and network\.clientKey\n$/);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('takes an encrypted key with CLAUDE_CODE_CLIENT_KEY_PASSPHRASE', async () => {
    const { ws, env } = await mtlsProject([say('unlocked')]);
    const run = await runKeel(['-p', 'hi'], {
      cwd: ws.dir,
      env: { ...env, CLAUDE_CODE_CLIENT_CERT: pki.client.certFile, CLAUDE_CODE_CLIENT_KEY: pki.client.encryptedKeyFile, CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: pki.client.passphrase },
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('unlocked\n');
  });

  it('takes the certificate from config network (relative paths from the working folder)', async () => {
    const { ws, env } = await mtlsProject([say('from config')]);
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ network: { clientCert: pki.client.certFile, clientKey: path.relative(ws.dir, pki.client.encryptedKeyFile), clientKeyPassphrase: pki.client.passphrase } }));
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('from config\n');
  });

  it('presents it through a proxy too (TLS to the server inside the CONNECT tunnel)', async () => {
    const tiny = await startTinyproxy();
    stops.push(tiny.stop);
    const { ws, env, server } = await mtlsProject([say('tunnelled and mutual')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, ...withCert(), HTTPS_PROXY: tiny.url() } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('tunnelled and mutual\n');
    expect(tiny.requests()).toEqual([`CONNECT 127.0.0.1:${new URL(server.url).port} HTTP/1.1`]);
  });

  it('is presented to an MCP server over https (private CA), directly and through the proxy', async () => {
    const everything = await startEverythingHttp();
    stops.push(everything.stop);
    // TLS in front of the server, refusing clients without a certificate the test CA signed.
    const target = new URL(everything.url);
    const front = tls.createServer({ ...pki.server, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (socket) => {
      const back = net.connect(Number(target.port), '127.0.0.1');
      socket.pipe(back).pipe(socket);
      socket.on('error', () => back.destroy());
      back.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', () => resolve()));
    stops.push(() => new Promise<void>((resolve) => front.close(() => resolve())));
    const url = `https://127.0.0.1:${(front.address() as AddressInfo).port}${target.pathname}`;
    const tiny = await startTinyproxy();
    stops.push(tiny.stop);
    for (const via of [{}, { HTTPS_PROXY: tiny.url() }]) {
      const { ws, env, server } = await mtlsProject([callTool('tool_search', { query: 'select:mcp__remote__get-sum' }, 'search'), callTool('mcp__remote__get-sum', { a: 2, b: 40 }, 'sum'), say('done')]);
      const config = JSON.stringify({ mcpServers: { remote: { type: 'http', url } } });
      const run = await runKeel(['-p', 'go', '--mcp-config', config, '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, ...withCert(), ...via }, timeoutMs: 60_000 });
      expect(run.stderr).toBe('');
      expect(toolResult(server, 'sum').text).toContain('42');
    }
    expect(tiny.requests()).toContain(`CONNECT ${new URL(url).host} HTTP/1.1`);
    // Without the certificate the server is refused, and the failure says so.
    const { ws, env } = await mtlsProject([]);
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ mcpServers: { remote: { type: 'http', url } } }));
    const list = await runKeel(['mcp', 'list'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(list.stdout).toMatch(/remote\s+failed/);
  }, 120_000);

  it('is never presented to pages web_fetch reads', async () => {
    const page = https.createServer({ ...pki.server, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (_req, res) => res.end('secret page'));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', () => resolve()));
    stops.push(() => new Promise<void>((resolve) => page.close(() => resolve())));
    const url = `https://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    const { ws, env, server } = await mtlsProject([
      callTool('tool_search', { query: 'select:web_fetch' }, 'search'),
      callTool('web_fetch', { url, prompt: 'read' }, 'fetch'),
      say('done'),
    ]);
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, ...withCert() }, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    const result = toolResult(server, 'fetch');
    expect(result.isError).toBe(true);
    expect(result.text).not.toContain('secret page');
  });
});

describe('keel doctor', () => {
  it('shows the client certificate in use and the extra CA certificates, and fails on a bad passphrase', async () => {
    const { ws, env } = await mtlsProject([]);
    const good = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env, ...withCert() }, timeoutMs: 60_000 });
    expect(good.stdout).toContain(`presented to the model API and MCP servers: CLAUDE_CODE_CLIENT_CERT (${pki.client.certFile})`);
    expect(good.stdout).toContain(`NODE_EXTRA_CA_CERTS: 1 certificate from ${pki.caFile}`);
    const bad = await runKeel(['doctor'], {
      cwd: ws.dir,
      env: { ...env, CLAUDE_CODE_CLIENT_CERT: pki.client.certFile, CLAUDE_CODE_CLIENT_KEY: pki.client.encryptedKeyFile, CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: 'nope' },
      timeoutMs: 60_000,
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toContain(`CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: wrong passphrase for the client key CLAUDE_CODE_CLIENT_KEY (${pki.client.encryptedKeyFile})`);
  });
});

describe('a client certificate that cannot be used: one line naming the file or variable', () => {
  it.each([
    ['a missing certificate file', () => ({ CLAUDE_CODE_CLIENT_CERT: '/nonexistent/client.pem', CLAUDE_CODE_CLIENT_KEY: pki.client.keyFile }), () => 'keel: CLAUDE_CODE_CLIENT_CERT: cannot read the client certificate /nonexistent/client.pem: no such file\n'],
    ['a missing key file', () => ({ CLAUDE_CODE_CLIENT_CERT: pki.client.certFile, CLAUDE_CODE_CLIENT_KEY: '/nonexistent/client.key' }), () => 'keel: CLAUDE_CODE_CLIENT_KEY: cannot read the client key /nonexistent/client.key: no such file\n'],
    [
      'a wrong passphrase',
      () => ({ CLAUDE_CODE_CLIENT_CERT: pki.client.certFile, CLAUDE_CODE_CLIENT_KEY: pki.client.encryptedKeyFile, CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: 'not it' }),
      () => `keel: CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: wrong passphrase for the client key CLAUDE_CODE_CLIENT_KEY (${pki.client.encryptedKeyFile})\n`,
    ],
    [
      'an encrypted key without a passphrase',
      () => ({ CLAUDE_CODE_CLIENT_CERT: pki.client.certFile, CLAUDE_CODE_CLIENT_KEY: pki.client.encryptedKeyFile }),
      () => `keel: the client key CLAUDE_CODE_CLIENT_KEY (${pki.client.encryptedKeyFile}) is encrypted: set CLAUDE_CODE_CLIENT_KEY_PASSPHRASE or config network.clientKeyPassphrase\n`,
    ],
    [
      'a key of another certificate',
      () => ({ CLAUDE_CODE_CLIENT_CERT: pki.client.certFile, CLAUDE_CODE_CLIENT_KEY: path.join(pki.dir, 'server.key') }),
      () => `keel: the client key CLAUDE_CODE_CLIENT_KEY (${path.join(pki.dir, 'server.key')}) does not belong to the certificate CLAUDE_CODE_CLIENT_CERT (${pki.client.certFile})\n`,
    ],
    ['a key without a certificate', () => ({ CLAUDE_CODE_CLIENT_KEY: pki.client.keyFile }), () => 'keel: CLAUDE_CODE_CLIENT_KEY is set but no client certificate is: set CLAUDE_CODE_CLIENT_CERT or config network.clientCert too\n'],
    // A FIFO or a device would hang the read or exhaust memory: refused before it is opened.
    [
      'a certificate that is a FIFO',
      () => {
        const fifo = path.join(pki.dir, 'cert-fifo');
        execFileSync('mkfifo', ['-m', '600', fifo]);
        return { CLAUDE_CODE_CLIENT_CERT: fifo, CLAUDE_CODE_CLIENT_KEY: pki.client.keyFile };
      },
      () => `keel: CLAUDE_CODE_CLIENT_CERT: the client certificate ${path.join(pki.dir, 'cert-fifo')} is not a regular file\n`,
    ],
    ['a key that is /dev/zero', () => ({ CLAUDE_CODE_CLIENT_CERT: pki.client.certFile, CLAUDE_CODE_CLIENT_KEY: '/dev/zero' }), () => 'keel: CLAUDE_CODE_CLIENT_KEY: the client key /dev/zero is not a regular file\n'],
  ])('%s', async (_name, vars, message) => {
    const { ws, env, server } = await mtlsProject([say('never')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, ...vars() }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toBe(message());
    expect(server.messageRequests()).toHaveLength(0);
  });
});
