/**
 * The ACP agent: `initialize`, `authenticate`, `session/new`, `session/load`, `session/prompt`, `session/cancel` and
 * `session/set_mode`, on the SDK's `AgentApp`. Every session is an `AcpSession` with its own kernel; a handler that
 * fails answers its request with a JSON-RPC error whose message says what went wrong, and nothing else stops.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  agent,
  PROTOCOL_VERSION,
  RequestError,
  type AgentApp,
  type AgentContext,
  type AuthMethod,
  type ClientCapabilities,
  type InitializeResponse,
  type McpServer,
} from '@agentclientprotocol/sdk';
import { errorMessage, startSession, userMessage, type Kernel, type SessionInit } from '../../kernel/index.js';
import { replayUpdates } from './history.js';
import { toKeelContent } from './prompt.js';
import { AcpSession } from './session.js';
import { sessionKernel } from './session-kernel.js';

export const AUTH_METHODS: AuthMethod[] = [
  { id: 'anthropic-api-key', name: 'Anthropic API key', description: 'ANTHROPIC_API_KEY in the environment the editor starts Keel with (the agent server\'s "env")' },
  { id: 'keel-login', name: 'keel login', description: 'The key `keel login` stored in $KEEL_HOME/auth.json: run it once in a terminal' },
];

/** A failure as a JSON-RPC error with a message a person can read (the SDK's own would say "Internal error"). */
function readable(err: unknown, what: string): RequestError {
  if (err instanceof RequestError) return err;
  return new RequestError(-32603, `${what}: ${userMessage(err).split('\n')[0]}`);
}

export class KeelAgent {
  private caps: ClientCapabilities = {};
  private readonly sessions = new Map<string, AcpSession>();
  private disconnected = false;
  /** Session ids a session/load is opening: another load or a prompt of the same id waits for its answer. */
  private readonly loading = new Set<string>();

  constructor(
    private readonly base: Kernel,
    private readonly env: NodeJS.ProcessEnv,
    private readonly version: string,
  ) {}

  /** A key Keel can call the model with, or undefined (providers other than Anthropic bring their own). */
  private hasKey(): boolean {
    const config = this.base.config;
    return Boolean(config.apiKey) || (config.provider ?? 'anthropic') !== 'anthropic';
  }

  private storedKey(): boolean {
    const file = path.join(this.base.config.keelHome, 'auth.json');
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as { apiKey?: unknown };
      return typeof parsed.apiKey === 'string' && parsed.apiKey.length > 0;
    } catch {
      return false;
    }
  }

  private requireKey(): void {
    if (!this.hasKey()) {
      throw RequestError.authRequired({ authMethods: AUTH_METHODS.map((m) => m.id) }, 'no API key: set ANTHROPIC_API_KEY in the agent server\'s "env" in the editor\'s settings, or run keel login in a terminal');
    }
  }

  private sessionOf(sessionId: string): AcpSession {
    if (this.loading.has(sessionId)) throw RequestError.invalidRequest({ sessionId }, `session "${sessionId}" is being loaded (wait for the session/load answer)`);
    const session = this.sessions.get(sessionId);
    if (!session) throw new RequestError(-32002, `unknown session "${sessionId}" (open it with session/new or session/load first)`, { sessionId });
    return session;
  }

  private notWhole(sessionId: string): RequestError {
    return new RequestError(-32002, `session/load: no session "${sessionId}" in this project (session/load takes a whole session id, as session/new answered it)`, { sessionId });
  }

  private checkCwd(cwd: string): string {
    if (!path.isAbsolute(cwd)) throw RequestError.invalidParams({ field: 'cwd' }, `cwd: "${cwd}" is not an absolute path`);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw RequestError.invalidParams({ field: 'cwd' }, `cwd: ${cwd} is not a folder`);
    return cwd;
  }

  /** A session on a kernel of its own; `register` false leaves adding it to the open sessions to the caller. */
  private async open(cwd: string, servers: McpServer[], init: Partial<SessionInit>, client: AgentContext, register = true): Promise<AcpSession> {
    const kernel = sessionKernel(this.base, this.checkCwd(cwd), servers);
    const session = await startSession(kernel, { cwd, ...init });
    const acp = new AcpSession(session.id, kernel, session, client, this.caps, () => !this.disconnected);
    if (register) this.sessions.set(session.id, acp);
    return acp;
  }

  app(): AgentApp {
    return agent({ name: 'keel' })
      .onRequest('initialize', ({ params }): InitializeResponse => {
        this.caps = params.clientCapabilities ?? {};
        return {
          // The version the client asked for when Keel speaks it, else the latest Keel speaks (the client decides).
          protocolVersion: params.protocolVersion === PROTOCOL_VERSION ? params.protocolVersion : PROTOCOL_VERSION,
          agentCapabilities: {
            loadSession: true,
            promptCapabilities: { image: true, audio: false, embeddedContext: true },
            mcpCapabilities: { http: true, sse: true },
          },
          authMethods: AUTH_METHODS,
          agentInfo: { name: 'keel', title: 'Keel', version: this.version },
        };
      })
      .onRequest('authenticate', ({ params }) => {
        const method = AUTH_METHODS.find((m) => m.id === params.methodId);
        if (!method) throw RequestError.invalidParams({ methodId: params.methodId }, `unknown auth method "${params.methodId}" (methods: ${AUTH_METHODS.map((m) => m.id).join(', ')})`);
        const ok = method.id === 'anthropic-api-key' ? Boolean(this.env.ANTHROPIC_API_KEY) : this.storedKey();
        if (!ok) {
          throw RequestError.authRequired(
            { methodId: method.id },
            method.id === 'anthropic-api-key'
              ? 'ANTHROPIC_API_KEY is not set in the environment Keel was started with: add it to the agent server\'s "env" in the editor\'s settings'
              : `no key stored in ${path.join(this.base.config.keelHome, 'auth.json')}: run keel login in a terminal`,
          );
        }
        return {};
      })
      .onRequest('session/new', async ({ params, client }) => {
        this.requireKey();
        try {
          const session = await this.open(params.cwd, params.mcpServers, {}, client);
          // After the response, so the editor knows the session id the updates name.
          setImmediate(() => session.announce());
          return { sessionId: session.id, modes: session.modes() };
        } catch (err) {
          throw readable(err, 'session/new');
        }
      })
      .onRequest('session/load', async ({ params, client }) => {
        this.requireKey();
        if (this.loading.has(params.sessionId)) throw RequestError.invalidRequest({ sessionId: params.sessionId }, `session/load: session "${params.sessionId}" is being loaded already (wait for that session/load's answer)`);
        this.loading.add(params.sessionId);
        try {
          return await this.load(params.sessionId, params.cwd, params.mcpServers, client);
        } finally {
          this.loading.delete(params.sessionId);
        }
      })
      .onRequest('session/prompt', async ({ params }) => {
        const session = this.sessionOf(params.sessionId);
        const content = toKeelContent(params.prompt);
        try {
          return { stopReason: await session.prompt(content) };
        } catch (err) {
          throw readable(err, 'session/prompt');
        }
      })
      .onRequest('session/set_mode', ({ params }) => {
        this.sessionOf(params.sessionId).setMode(params.modeId);
        return {};
      })
      .onNotification('session/cancel', ({ params }) => {
        this.sessions.get(params.sessionId)?.cancel();
      });
  }

  /** session/load of one id (no other load of it runs). */
  private async load(sessionId: string, cwd: string, mcpServers: McpServer[], client: AgentContext) {
    const open = this.sessions.get(sessionId);
    if (open?.busy()) throw RequestError.invalidRequest({ sessionId }, `session/load: a prompt is running in session "${sessionId}" (cancel it with session/cancel first)`);
    // A prefix of an open session's id would open a second kernel writing the same session file.
    if ([...this.sessions.keys()].some((id) => id !== sessionId && id.startsWith(sessionId))) throw this.notWhole(sessionId);
    let session: AcpSession;
    try {
      session = await this.open(cwd, mcpServers, { resume: { id: sessionId } }, client, false);
    } catch (err) {
      throw new RequestError(-32002, `session/load: ${userMessage(err).split('\n')[0]!.replace(/^--resume: /, '')}`, { sessionId });
    }
    // The session store also resumes a unique prefix (as --resume does); an editor must name the session whole,
    // since every update and request names it by the id it gave.
    if (session.id !== sessionId) {
      await session.close();
      throw this.notWhole(sessionId);
    }
    // The session was open here already: the new kernel replaces it only now that it loaded, so a failed load
    // leaves the open one as it was.
    this.sessions.set(session.id, session);
    if (open) await open.close();
    for (const update of replayUpdates(session.kernel, session.session.messages, session.session.cwd)) session.send(update);
    session.announce();
    return { modes: session.modes() };
  }

  /** The connection is going away: what can no longer reach the editor is dropped quietly. */
  disconnect(): void {
    this.disconnected = true;
  }

  /** Every session stops (the connection closed): turns are aborted, their processes killed. */
  async closeAll(): Promise<void> {
    this.disconnected = true;
    await Promise.all([...this.sessions.values()].map((s) => s.close().catch((err: unknown) => process.stderr.write(`keel: acp: ${errorMessage(err)}\n`))));
    this.sessions.clear();
  }
}
