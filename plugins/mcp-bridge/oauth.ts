/**
 * OAuth for remote servers through the SDK's client auth provider: tokens, the registered client and the PKCE
 * verifier are kept in `$KEEL_HOME/mcp-auth/<server>.json` (0600). The user authorizes in a browser (`$BROWSER`,
 * else the system opener; the URL is also logged), which redirects to a one-shot server on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

interface Stored {
  /** The loopback port the client was registered with, reused so its redirect URI stays valid. */
  callbackPort?: number;
  tokens?: OAuthTokens;
  client?: OAuthClientInformationMixed;
  verifier?: string;
}

export const authFile = (keelHome: string, server: string) => path.join(keelHome, 'mcp-auth', `${server.replace(/[^\w.-]/g, '_')}.json`);

/** The callback port a registered client expects, if one was stored. */
export function storedCallbackPort(keelHome: string, server: string): number | undefined {
  try {
    const port = (JSON.parse(readFileSync(authFile(keelHome, server), 'utf8')) as Stored).callbackPort;
    return typeof port === 'number' ? port : undefined;
  } catch {
    return undefined;
  }
}

export function hasStoredTokens(keelHome: string, server: string): boolean {
  const file = authFile(keelHome, server);
  if (!existsSync(file)) return false;
  try {
    return Boolean((JSON.parse(readFileSync(file, 'utf8')) as Stored).tokens);
  } catch {
    return false;
  }
}

/** A loopback server that receives the authorization redirect once. */
export class CallbackServer {
  private server?: http.Server;
  private waiting?: { resolve(code: string): void; reject(err: Error): void };
  port = 0;

  async listen(port: number): Promise<void> {
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/callback') {
        res.writeHead(404).end();
        return;
      }
      const code = url.searchParams.get('code');
      const error = url.searchParams.get('error');
      res.writeHead(code ? 200 : 400, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(code ? 'Keel is authorized. You can close this window.' : `Authorization failed: ${error ?? 'no code'}`);
      if (code) this.waiting?.resolve(code);
      else this.waiting?.reject(new Error(`authorization failed: ${error ?? 'the redirect carried no code'}`));
      this.waiting = undefined;
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    server.unref();
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  get redirectUrl(): string {
    return `http://127.0.0.1:${this.port}/callback`;
  }

  /** The code of the next redirect; fails after `timeoutMs`. */
  code(timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no authorization within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      timer.unref();
      this.waiting = {
        resolve: (code) => {
          clearTimeout(timer);
          resolve(code);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
    });
  }

  close(): void {
    this.server?.close();
    this.server = undefined;
  }
}

export interface ProviderOptions {
  keelHome: string;
  server: string;
  callback: CallbackServer;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  /** Shows the authorization URL to the user. */
  onAuthorize(url: URL): void;
}

export class FileOAuthProvider implements OAuthClientProvider {
  private readonly file: string;

  constructor(private readonly opts: ProviderOptions) {
    this.file = authFile(opts.keelHome, opts.server);
  }

  get redirectUrl(): string {
    return this.opts.callback.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Keel',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.opts.clientSecret ? 'client_secret_post' : 'none',
      ...(this.opts.scope ? { scope: this.opts.scope } : {}),
    };
  }

  private read(): Stored {
    if (!existsSync(this.file)) return {};
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as Stored;
    } catch {
      return {};
    }
  }

  private write(patch: Partial<Stored>): void {
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ ...this.read(), ...patch }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    if (this.opts.clientId) return { client_id: this.opts.clientId, ...(this.opts.clientSecret ? { client_secret: this.opts.clientSecret } : {}) };
    return this.read().client;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.write({ client, callbackPort: this.opts.callback.port });
  }

  tokens(): OAuthTokens | undefined {
    return this.read().tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.write({ tokens });
  }

  redirectToAuthorization(url: URL): void {
    this.opts.onAuthorize(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.write({ verifier });
  }

  codeVerifier(): string {
    const verifier = this.read().verifier;
    if (!verifier) throw new Error(`no PKCE verifier stored in ${this.file}`);
    return verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all') this.write({ tokens: undefined, client: undefined, verifier: undefined });
    else if (scope === 'tokens') this.write({ tokens: undefined });
    else if (scope === 'client') this.write({ client: undefined });
    else if (scope === 'verifier') this.write({ verifier: undefined });
  }
}

/** Opens the URL with `$BROWSER` (a command taking the URL), else the system opener. Never throws. */
export function openBrowser(url: string): void {
  const command = process.env.BROWSER || (process.platform === 'darwin' ? 'open' : 'xdg-open');
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // the URL is logged as well
  }
}
