/**
 * The provider's requests over TLS (the real API is https): Keel's HTTP client verifies the server's certificate
 * against Node's trust store, NODE_EXTRA_CA_CERTS included, and streams the answer as over plain HTTP.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  // Node reads NODE_EXTRA_CA_CERTS once at start and, when it cannot, only warns: Keel's line says what is wrong with it.
  it.each([
    ['a path where no file is', () => path.join(dir, 'missing', 'ca.pem'), (file: string) => `NODE_EXTRA_CA_CERTS: cannot read ${file} (no such file), so Node trusts none of it`],
    ['a file with no PEM certificate', () => (writeFileSync(path.join(dir, 'empty.pem'), 'not a certificate\n'), path.join(dir, 'empty.pem')), (file: string) => `NODE_EXTRA_CA_CERTS: ${file} holds no PEM certificate`],
    ['the certificate of another CA', () => {
      const other = path.join(dir, 'other-ca.pem');
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'other.key'), '-out', other, '-days', '1', '-subj', '/CN=Other CA'], { stdio: 'ignore' });
      return other;
    }, (file: string) => `NODE_EXTRA_CA_CERTS (${file}, 1 certificate) does not hold the CA that signed it`],
  ])('NODE_EXTRA_CA_CERTS naming %s: one line naming the file and what is wrong with it', async (_what, make, expected) => {
    const file = make();
    const { ws, env, server } = await prepare([say('never')], { tls });
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, NODE_EXTRA_CA_CERTS: file }, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    const lines = run.stderr.split('\n').filter((line) => line.startsWith('keel:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^keel: .*cannot reach the Anthropic API: its TLS certificate is not trusted \(/);
    expect(lines[0]).toContain(expected(file));
    expect(lines[0]).not.toContain('set NODE_EXTRA_CA_CERTS to');
    expect(server.messageRequests()).toHaveLength(0);
  }, 90_000);
});
