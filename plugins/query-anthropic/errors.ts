/** Turns a failed call into the error the loop and the user should see. */
import { readFileSync, statSync } from 'node:fs';
import { ContextOverflowError, isAbortError, KeelError } from '../../kernel/index.js';

interface ApiErrorShape {
  status?: unknown;
  message?: unknown;
  error?: { error?: { type?: unknown; message?: unknown }; type?: unknown; message?: unknown };
}

function apiDetail(err: ApiErrorShape): { type?: string; message: string } {
  const inner = err.error?.error ?? err.error;
  const type = typeof inner?.type === 'string' ? inner.type : undefined;
  const message = typeof inner?.message === 'string' ? inner.message : String(err.message ?? 'unknown error');
  return { type, message };
}

/** A cloud platform that serves Claude through this SDK's client (query-bedrock, query-vertex). */
export interface Platform {
  /** Names the platform in errors and retry notices: "Amazon Bedrock", "Google Vertex AI". */
  label: string;
  /** The model id sent: the platform's id for the Claude model asked for. */
  model: string;
  /** Send the history as pre-serialised bytes (body.ts); false when the client signs the body it serialised. */
  prebuild: boolean;
  /** What to check when the platform refuses the credentials or none can be found. */
  credentialsHint: string;
  /** What to check when the endpoint answers something other than an event stream. */
  endpointHint: string;
}

/** Credential look-ups the platform SDKs report as connection failures, with the cause that says what is missing. */
const CREDENTIAL_FAILURES = /^(Failed to resolve AWS credentials|Failed to acquire Google OAuth credentials)/;

export function mapError(err: unknown, model: string, platform?: Platform): unknown {
  if (isAbortError(err) || typeof err !== 'object' || err === null) return err;
  const e = err as ApiErrorShape;
  if (platform) return platformError(err, e, model, platform);
  if (err instanceof KeelError) return err;
  if (typeof e.status !== 'number') return networkRefusal(err) ?? tlsRefusal(err) ?? err;
  const { type, message } = apiDetail(e);
  if (e.status === 400 && /prompt is too long|context window|too many (input )?tokens/i.test(message)) return new ContextOverflowError(message);
  if (e.status === 407) {
    return new KeelError(`the proxy in HTTP_PROXY requires authentication (407): put the user and password in its URL (http://user:password@host:port)`, { code: 'ERR_PROXY_AUTH', cause: err });
  }
  if (e.status === 401) {
    return new KeelError('invalid API key: the Anthropic API answered 401; set ANTHROPIC_API_KEY, `apiKey` in agent.config.ts, or run keel login', { code: 'auth', cause: err });
  }
  if (e.status === 403) {
    return new KeelError(`permission denied: the Anthropic API answered 403 (the API key lacks permission for this request): ${message}`, { code: 'auth', cause: err });
  }
  if (e.status === 404) {
    return new KeelError(`model "${model}" not found (Anthropic API answered 404: ${message}); check \`model\`/\`smallModel\` or --model`, { cause: err });
  }
  // `invalid_request`: the request itself is at fault; the loop does not keep a prompt the API refuses this way.
  const code = e.status === 400 && type === 'invalid_request_error' ? 'invalid_request' : undefined;
  return new KeelError(`the Anthropic API refused the request: HTTP ${e.status}${type ? ` ${type}` : ''}: ${message}`, { code, cause: err });
}

/** The `network` plugin's one-line refusals (a proxy, a client certificate), found among the causes, as they are. */
function networkRefusal(err: unknown): KeelError | undefined {
  for (let cur: unknown = err, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const { code, message } = cur as { code?: unknown; message?: unknown };
    if (cur instanceof KeelError && typeof code === 'string' && /^ERR_(PROXY|CLIENT_CERT)/.test(code)) return cur;
    if (typeof code === 'string' && (code.startsWith('ERR_PROXY_') || code === 'ERR_CLIENT_CERT')) return new KeelError(String(message), { code: String(code), cause: err });
  }
  return undefined;
}

/** The platform SDK's credential failure in an error's cause chain (the retry service wraps it when it gives up). */
function credentialFailure(err: unknown): { message: string; cause?: string } | undefined {
  for (let cur: unknown = err, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const { message, cause } = cur as { message?: unknown; cause?: { message?: unknown } };
    if (typeof message === 'string' && CREDENTIAL_FAILURES.test(message)) return { message: message.replace(/\.$/, ''), cause: cause?.message === undefined ? undefined : String(cause.message) };
  }
  return undefined;
}

function platformError(err: unknown, e: ApiErrorShape, model: string, platform: Platform): unknown {
  const credentials = credentialFailure(err);
  if (credentials) {
    return new KeelError(`${platform.label}: ${credentials.message}${credentials.cause ? ` (${credentials.cause})` : ''}; ${platform.credentialsHint}`, { code: 'auth', cause: err });
  }
  if (err instanceof KeelError) return err;
  if (typeof e.status !== 'number') return tlsRefusal(err, platform.label) ?? err;
  const { type, message } = apiDetail(e);
  if (e.status === 400 && /prompt is too long|context window|too many (input )?tokens|input is too long/i.test(message)) return new ContextOverflowError(message);
  if (e.status === 401 || e.status === 403) {
    return new KeelError(`${platform.label} refused the credentials (HTTP ${e.status}: ${message}); ${platform.credentialsHint}`, { code: 'auth', cause: err });
  }
  if (e.status === 404) {
    return new KeelError(`${platform.label} has no model "${platform.model}" for "${model}" (HTTP 404: ${message}); set --model or ANTHROPIC_MODEL to the platform's model id`, { cause: err });
  }
  const code = e.status === 400 ? 'invalid_request' : undefined;
  return new KeelError(`${platform.label} refused the request: HTTP ${e.status}${type ? ` ${type}` : ''}: ${message}`, { code, cause: err });
}

/**
 * What to do about an untrusted certificate. Node reads NODE_EXTRA_CA_CERTS once at start and, when it cannot, only
 * warns and goes on without it: so when it is set, say what is wrong with that file rather than to set it.
 */
function extraCaAdvice(): string {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return 'behind a proxy or a private CA, set NODE_EXTRA_CA_CERTS to its certificate file';
  let pem: string;
  try {
    // Node has read it already if it could; a FIFO or device here must not hang the error path.
    if (!statSync(file).isFile()) return `NODE_EXTRA_CA_CERTS: ${file} is not a regular file, so Node trusts none of it`;
    pem = readFileSync(file, 'latin1');
  } catch (err) {
    const code = (err as { code?: string }).code;
    return `NODE_EXTRA_CA_CERTS: cannot read ${file} (${code === 'ENOENT' ? 'no such file' : (code ?? errorText(err))}), so Node trusts none of it: point it at the PEM file of your proxy's or company's CA`;
  }
  const count = pem.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;
  if (count === 0) return `NODE_EXTRA_CA_CERTS: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----), so Node trusts none of it`;
  return `NODE_EXTRA_CA_CERTS (${file}, ${count} certificate${count === 1 ? '' : 's'}) does not hold the CA that signed it: add that CA's certificate to the file`;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** A TLS peer Node refused (untrusted, expired or misnamed certificate), or a header that cannot be sent, said as what to do about it. */
function tlsRefusal(err: unknown, label = 'the Anthropic API'): KeelError | undefined {
  for (let cur: unknown = err, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const { code, message } = cur as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && /ALERT_(CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA|HANDSHAKE_FAILURE)/.test(code)) {
      return new KeelError(`cannot reach the Anthropic API: the server refused the TLS handshake (${code}); it likely requires a client certificate: set CLAUDE_CODE_CLIENT_CERT and CLAUDE_CODE_CLIENT_KEY, or config network.clientCert and network.clientKey`, { cause: err });
    }
    if (typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|^ERR_TLS_/.test(code)) {
      // Node 22+ appends its own advice after a ';' ("try running Node.js with --use-system-ca"): Keel says what to do.
      const reason = String(message).split(';')[0];
      return new KeelError(`cannot reach ${label}: its TLS certificate is not trusted (${reason}, ${code}); ${extraCaAdvice()}`, { cause: err });
    }
    if (code === 'ERR_INVALID_CHAR') return new KeelError(`cannot send the request: ${String(message)} (check the API key and any configured headers)`, { cause: err });
  }
  return undefined;
}
