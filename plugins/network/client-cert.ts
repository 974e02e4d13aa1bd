/** The client certificate for mutual TLS, read once and checked, with errors that name the file or variable at fault. */
import { readFileSync, statSync } from 'node:fs';
import tls from 'node:tls';
import { KeelError } from '../../kernel/index.js';
import type { ResolvedNetwork, Sourced } from './settings.js';

export interface ClientIdentity {
  cert: Buffer;
  key: Buffer;
  passphrase?: string;
  /** "CLAUDE_CODE_CLIENT_CERT (/path/cert.pem)", for doctor. */
  shown: string;
}

function fail(message: string): never {
  throw new KeelError(message, { code: 'ERR_CLIENT_CERT', exitCode: 2 });
}

/** PEM files are small; a larger one (or a FIFO, a device such as /dev/zero) is a mistake that must not hang Keel. */
const MAX_PEM_BYTES = 1024 * 1024;

function readPem(setting: Sourced, what: string): Buffer {
  try {
    const info = statSync(setting.value);
    if (!info.isFile()) return fail(`${setting.source}: the client ${what} ${setting.value} is not a regular file`);
    if (info.size > MAX_PEM_BYTES) return fail(`${setting.source}: the client ${what} ${setting.value} is larger than 1 MB (${info.size} bytes)`);
    return readFileSync(setting.value);
  } catch (err) {
    if (err instanceof KeelError) throw err;
    const code = (err as { code?: string }).code;
    return fail(`${setting.source}: cannot read the client ${what} ${setting.value}${code === 'ENOENT' ? ': no such file' : code ? ` (${code})` : ''}`);
  }
}

/** Undefined when no client certificate is set; throws a one-line error when it cannot be used. */
export function loadIdentity(settings: ResolvedNetwork): ClientIdentity | undefined {
  const { clientCert, clientKey, passphrase } = settings;
  if (!clientCert && !clientKey) return undefined;
  if (!clientCert) return fail(`${clientKey!.source} is set but no client certificate is: set CLAUDE_CODE_CLIENT_CERT or config network.clientCert too`);
  const cert = readPem(clientCert, 'certificate');
  // A PEM file may hold the certificate and its key together.
  const key = clientKey ? readPem(clientKey, 'key') : cert;
  const keyName = clientKey ? `${clientKey.source} (${clientKey.value})` : `${clientCert.source} (${clientCert.value}, which must then hold the key too)`;
  if (!/-----BEGIN CERTIFICATE-----/.test(cert.toString('latin1'))) fail(`${clientCert.source}: ${clientCert.value} holds no PEM certificate`);
  try {
    tls.createSecureContext({ cert, key, ...(passphrase ? { passphrase: passphrase.value } : {}) });
  } catch (err) {
    const message = (err as Error).message;
    const code = (err as { code?: string }).code ?? '';
    if (/bad decrypt|bad password|interrupted or cancelled|maybe wrong password/i.test(message) || (/PEM/.test(code) && /encrypted|pass/i.test(key.toString('latin1')))) {
      fail(passphrase ? `${passphrase.source}: wrong passphrase for the client key ${keyName}` : `the client key ${keyName} is encrypted: set CLAUDE_CODE_CLIENT_KEY_PASSPHRASE or config network.clientKeyPassphrase`);
    }
    if (/key values mismatch/i.test(message)) fail(`the client key ${keyName} does not belong to the certificate ${clientCert.source} (${clientCert.value})`);
    if (/no start line|bad base64|unsupported|DECODER|NOT_ENOUGH_DATA/i.test(message + code)) fail(`${keyName}: not a PEM private key (${message})`);
    fail(`the client certificate ${clientCert.source} (${clientCert.value}) cannot be used: ${message}`);
  }
  return { cert, key, ...(passphrase ? { passphrase: passphrase.value } : {}), shown: `${clientCert.source} (${clientCert.value})` };
}
