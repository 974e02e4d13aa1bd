/** What the environment and the config ask of the network: cheap to read, so it decides whether anything loads. */
import path from 'node:path';

export interface NetworkSettings {
  clientCert?: string;
  clientKey?: string;
  clientKeyPassphrase?: string;
  /** How long a proxy may take to answer CONNECT (default 20 s). */
  proxyTimeoutMs?: number;
}

/** A setting's value and where it came from (a variable's name or `config network.<key>`), for messages. */
export interface Sourced {
  value: string;
  source: string;
}

export interface ResolvedNetwork {
  /** A proxy variable or a client certificate is set. */
  configured: boolean;
  /** `https:` and `http:` proxies as given, with the variable that set each. */
  httpsProxy?: Sourced;
  httpProxy?: Sourced;
  noProxy?: Sourced;
  clientCert?: Sourced;
  clientKey?: Sourced;
  passphrase?: Sourced;
  proxyTimeoutMs?: number;
}

/** The lower-case form first, as curl and most tools read them; an empty value counts as unset. */
function variable(env: NodeJS.ProcessEnv, name: string): Sourced | undefined {
  for (const key of [name.toLowerCase(), name]) {
    const value = env[key]?.trim();
    if (value) return { value, source: key };
  }
  return undefined;
}

function file(env: NodeJS.ProcessEnv, name: string, configured: string | undefined, key: string, cwd: string): Sourced | undefined {
  const fromEnv = env[name]?.trim();
  if (fromEnv) return { value: path.resolve(cwd, fromEnv), source: name };
  if (configured) return { value: path.resolve(cwd, configured), source: `config network.${key}` };
  return undefined;
}

/** The variables outrank the config (as the environment outranks config files everywhere in Keel). */
export function settingsOf(env: NodeJS.ProcessEnv, config: NetworkSettings | undefined, cwd: string): ResolvedNetwork {
  const httpsProxy = variable(env, 'HTTPS_PROXY');
  const httpProxy = variable(env, 'HTTP_PROXY');
  const noProxy = variable(env, 'NO_PROXY');
  const clientCert = file(env, 'CLAUDE_CODE_CLIENT_CERT', config?.clientCert, 'clientCert', cwd);
  const clientKey = file(env, 'CLAUDE_CODE_CLIENT_KEY', config?.clientKey, 'clientKey', cwd);
  const passphraseEnv = env.CLAUDE_CODE_CLIENT_KEY_PASSPHRASE;
  const passphrase =
    passphraseEnv !== undefined && passphraseEnv !== ''
      ? { value: passphraseEnv, source: 'CLAUDE_CODE_CLIENT_KEY_PASSPHRASE' }
      : config?.clientKeyPassphrase !== undefined
        ? { value: config.clientKeyPassphrase, source: 'config network.clientKeyPassphrase' }
        : undefined;
  return {
    configured: Boolean(httpsProxy || httpProxy || clientCert || clientKey),
    ...(httpsProxy ? { httpsProxy } : {}),
    ...(httpProxy ? { httpProxy } : {}),
    ...(noProxy ? { noProxy } : {}),
    ...(clientCert ? { clientCert } : {}),
    ...(clientKey ? { clientKey } : {}),
    ...(passphrase ? { passphrase } : {}),
    ...(config?.proxyTimeoutMs ? { proxyTimeoutMs: config.proxyTimeoutMs } : {}),
  };
}
