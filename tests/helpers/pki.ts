/** A private certificate authority made with openssl in a temp folder: a server certificate for 127.0.0.1 and a client certificate it signed. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Pki {
  dir: string;
  /** The CA's certificate (PEM file): what NODE_EXTRA_CA_CERTS names. */
  caFile: string;
  ca: string;
  server: { key: string; cert: string };
  client: { certFile: string; keyFile: string; encryptedKeyFile: string; passphrase: string };
  cleanup(): void;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makePki(): Pki {
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-pki-'));
  openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Keel Test CA');
  const issue = (name: string, subject: string, ext: string) => {
    openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    require_ext(dir, name, ext);
    openssl(dir, 'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`);
  };
  issue('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  issue('client', '/CN=keel-test-client', 'extendedKeyUsage=clientAuth\n');
  const passphrase = 'open sesame';
  openssl(dir, 'pkey', '-in', 'client.key', '-out', 'client-encrypted.key', '-aes256', '-passout', `pass:${passphrase}`);
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    caFile: file('ca.pem'),
    ca: readFileSync(file('ca.pem'), 'utf8'),
    server: { key: readFileSync(file('server.key'), 'utf8'), cert: readFileSync(file('server.pem'), 'utf8') },
    client: { certFile: file('client.pem'), keyFile: file('client.key'), encryptedKeyFile: file('client-encrypted.key'), passphrase },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function require_ext(dir: string, name: string, ext: string): void {
  execFileSync('sh', ['-c', `cat > ${name}.ext`], { cwd: dir, input: ext });
}
