/**
 * The provider's requests over TLS (the real API is https): Keel's HTTP client verifies the server's certificate
 * against Node's trust store, NODE_EXTRA_CA_CERTS included, and streams the answer as over plain HTTP.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
let dir: string;
let tls: { key: string; cert: string };
let certFile: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'keel-https-'));
  certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  tls = { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(certFile, 'utf8') };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('keel -p over https', () => {
  it('answers through a server whose certificate NODE_EXTRA_CA_CERTS trusts, reusing the connection', async () => {
    const { ws, env, server } = await prepare([say('over TLS')], { tls });
    expect(server.url).toMatch(/^https:/);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, NODE_EXTRA_CA_CERTS: certFile } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('over TLS\n');
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('refuses a server whose certificate nothing trusts, naming why', async () => {
    const { ws, env, server } = await prepare([say('never')], { tls });
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/^keel: .*cannot reach the Anthropic API: its TLS certificate is not trusted \(self[- ]signed certificate, DEPTH_ZERO_SELF_SIGNED_CERT\); behind a proxy or a private CA, set NODE_EXTRA_CA_CERTS/);
    expect(server.messageRequests()).toHaveLength(0);
  }, 90_000);
});
