/**
 * One MCP server: connect (initialize, then every page of tools/list and prompts/list), follow list changes,
 * and survive the server. A server that exits, hangs or sends garbage fails its pending calls (the SDK
 * rejects them when the transport closes) and is reconnected with bounded backoff; nothing here rejects
 * unhandled.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Prompt,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { errorMessage as baseMessage, KERNEL_VERSION, type McpServerConfig } from '../../kernel/index.js';
import { CallbackServer, FileOAuthProvider, hasStoredTokens, openBrowser, storedCallbackPort } from './oauth.js';
import { expandServer, transportOf, type TransportKind } from './settings.js';
import { GroupStdioTransport } from './stdio.js';
import { holdOpen } from './keep-alive.js';
import type { McpCallResult } from './content.js';

export type Status = 'connecting' | 'connected' | 'reconnecting' | 'needs-auth' | 'failed' | 'closed';

export interface ConnectionOptions {
  keelHome: string;
  /** Variables added to a stdio server's environment (the \`processes\` service's tag). */
  spawnEnv?: () => Record<string, string>;
  cwd: string;
  /** Reconnect after failures (a session); `keel mcp list` tries once. */
  retry: boolean;
  /** Delays between reconnection attempts, in ms; their count bounds the attempts. */
  backoffMs: number[];
  connectTimeoutMs: number;
  maxMessageBytes: number;
  /** Bytes of a stdio server's stderr log before it is rotated. */
  maxLogBytes: number;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void;
  /** Tools or prompts changed (connected, refreshed, or gone). */
  onChange(): void;
  /**
   * The fetch of the remote transports, their OAuth discovery and token requests: the `network` plugin's (proxies,
   * the client certificate, sockets that do not keep a finished Keel running). Without it, only stdio servers connect.
   */
  fetch?: (input: string | URL, init?: RequestInit) => Promise<Response>;
}

const AUTHORIZE_TIMEOUT_MS = 5 * 60_000;
export const DEFAULT_BACKOFF_MS = [500, 1000, 2000, 4000, 8000];

export class Connection {
  status: Status = 'connecting';
  lastError?: string;
  tools: Tool[] = [];
  prompts: Prompt[] = [];
  readonly transport: TransportKind;
  private client?: Client;
  private closing = false;
  private failures = 0;
  /** Whether this server has connected once in this run (a failure before that is a failed start). */
  private everConnected = false;
  private retryTimer?: NodeJS.Timeout;
  private ready: Promise<void>;
  private settle!: () => void;
  private authFlow?: Promise<void>;
  private useAuth: boolean;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly opts: ConnectionOptions,
  ) {
    this.transport = transportOf(config);
    this.useAuth = config.oauth !== undefined || hasStoredTokens(opts.keelHome, name);
    this.ready = this.newReady();
  }

  get logFile(): string {
    return path.join(this.opts.keelHome, 'logs', 'mcp', `${this.name.replace(/[^\w.-]/g, '_')}.log`);
  }

  /** ` (log: <file>)` for a stdio server, whose stderr is there; nothing for a remote one. */
  get logNote(): string {
    return this.transport === 'stdio' ? ` (log: ${this.logFile})` : '';
  }

  private newReady(): Promise<void> {
    return new Promise((resolve) => (this.settle = resolve));
  }

  /** Connects in the background. Resolves when the first attempt ends, connected or not; never rejects. */
  start(): Promise<void> {
    return this.connect();
  }

  private connect(): Promise<void> {
    return this.connectOnce();
  }

  private async connectOnce(): Promise<void> {
    if (this.closing) return;
    let client: Client | undefined;
    /** What the transport reported during this attempt (a server's exit says more than "Connection closed"). */
    let attemptError: string | undefined;
    try {
      const server = expandServer(this.name, this.config, process.env);
      const transport = await this.makeTransport(server);
      client = new Client({ name: 'keel', version: KERNEL_VERSION }, { capabilities: {} });
      unrefTimeouts(client);
      client.onerror = (err) => {
        attemptError = errorMessage(err);
        this.lastError = attemptError;
        this.opts.log('debug', `${this.name}: ${this.lastError}`);
      };
      client.onclose = () => {
        if (this.client === client && this.status === 'connected') this.lost(this.lastError ?? 'the connection closed');
      };
      this.client = client;
      await client.connect(transport, { timeout: this.opts.connectTimeoutMs });
      const capabilities = client.getServerCapabilities() ?? {};
      if (capabilities.tools?.listChanged) client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refresh());
      if (capabilities.prompts?.listChanged) client.setNotificationHandler(PromptListChangedNotificationSchema, () => void this.refresh());
      await this.list(client);
      if (this.client !== client) return;
      this.status = 'connected';
      this.everConnected = true;
      this.failures = 0;
      this.lastError = undefined;
      this.opts.log('debug', `${this.name}: connected (${this.tools.length} tools)`);
      this.settle();
      this.opts.onChange();
    } catch (err) {
      if (this.client === client) this.client = undefined;
      await client?.close().catch(() => undefined);
      if (this.closing) return;
      if (!this.useAuth && isUnauthorized(err)) {
        this.useAuth = true;
        return this.connectOnce();
      }
      // The authorization flow connects again once the user has authorized.
      if (err instanceof UnauthorizedError && this.authFlow) return this.authFlow;
      const reason = describeConnectError(err);
      this.lastError = attemptError && /connection closed/i.test(reason) ? attemptError : reason;
      this.scheduleRetry();
    }
  }

  private async makeTransport(server: McpServerConfig): Promise<Transport> {
    if (this.transport === 'stdio') {
      return new GroupStdioTransport({
        command: server.command!,
        args: server.args ?? [],
        env: { ...server.env, ...this.opts.spawnEnv?.() },
        cwd: server.cwd ? path.resolve(this.opts.cwd, server.cwd) : this.opts.cwd,
        logFile: this.logFile,
        maxMessageBytes: this.opts.maxMessageBytes,
        maxLogBytes: this.opts.maxLogBytes,
      });
    }
    let url: URL;
    try {
      url = new URL(server.url!);
    } catch {
      throw new Error(`mcpServers.${this.name}.url: not a valid URL: ${server.url}`);
    }
    // The server, its OAuth endpoints and discovery all go through the network plugin's fetch.
    const fetch = this.opts.fetch;
    if (!fetch) throw new Error(`a remote (${this.transport}) MCP server is reached through the network plugin, which this agent does not have: add network() to its plugins`);
    const requestInit = { headers: server.headers ?? {} };
    const authProvider = this.useAuth ? await this.authProvider() : undefined;
    return this.transport === 'sse'
      ? new SSEClientTransport(url, { requestInit, authProvider, fetch })
      : new StreamableHTTPClientTransport(url, { requestInit, authProvider, fetch });
  }

  private callback?: CallbackServer;

  private async authProvider(): Promise<FileOAuthProvider> {
    if (!this.callback) {
      this.callback = new CallbackServer();
      const port = this.config.oauth?.callbackPort ?? storedCallbackPort(this.opts.keelHome, this.name) ?? 0;
      await this.callback.listen(port).catch(async (err) => {
        // A remembered port that is taken now: a new one (the client registers again if it must).
        if (this.config.oauth?.callbackPort !== undefined || port === 0) throw err;
        await this.callback!.listen(0);
      });
    }
    return new FileOAuthProvider({
      keelHome: this.opts.keelHome,
      server: this.name,
      callback: this.callback,
      clientId: this.config.oauth?.clientId,
      clientSecret: this.config.oauth?.clientSecret,
      scope: this.config.oauth?.scope,
      onAuthorize: (url) => this.authorize(url),
    });
  }

  /** The user authorizes in a browser; the code comes back to the loopback server and the connection restarts. */
  private authorize(url: URL): void {
    if (this.authFlow) return;
    this.status = 'needs-auth';
    this.opts.log('warn', `MCP server ${this.name} needs authorization: open ${url.href}`);
    openBrowser(url.href);
    this.authFlow = (async () => {
      try {
        const code = await this.callback!.code(AUTHORIZE_TIMEOUT_MS);
        const server = expandServer(this.name, this.config, process.env);
        const transport = (await this.makeTransport(server)) as StreamableHTTPClientTransport | SSEClientTransport;
        await transport.finishAuth(code);
      } catch (err) {
        this.lastError = `authorization failed: ${errorMessage(err)}`;
        this.opts.log('warn', `MCP server ${this.name}: ${this.lastError}`);
        this.status = 'failed';
        this.settle();
        return;
      } finally {
        this.authFlow = undefined;
      }
      await this.connectOnce();
    })();
  }

  private async list(client: Client): Promise<void> {
    const capabilities = client.getServerCapabilities() ?? {};
    const options = { timeout: this.opts.connectTimeoutMs };
    const at = (cursor: string | undefined) => (cursor ? { cursor } : undefined);
    const tools: Tool[] = capabilities.tools ? await allPages((cursor) => client.listTools(at(cursor), options).then((page) => ({ items: page.tools, next: page.nextCursor }))) : [];
    const prompts: Prompt[] = capabilities.prompts ? await allPages((cursor) => client.listPrompts(at(cursor), options).then((page) => ({ items: page.prompts, next: page.nextCursor }))) : [];
    this.tools = tools;
    this.prompts = prompts;
  }

  /** Set while the lists are being re-read. */
  refreshing?: Promise<void>;

  /** Re-reads the tool and prompt lists (after `list_changed`). */
  refresh(): Promise<void> {
    const client = this.client;
    if (!client || this.status !== 'connected') return Promise.resolve();
    const previous = this.refreshing ?? Promise.resolve();
    const next: Promise<void> = previous.then(async () => {
      try {
        await this.list(client);
        if (this.client === client) this.opts.onChange();
      } catch (err) {
        this.opts.log('warn', `MCP server ${this.name}: could not refresh its lists: ${errorMessage(err)}`);
      } finally {
        if (this.refreshing === next) this.refreshing = undefined;
      }
    });
    this.refreshing = next;
    return next;
  }

  private lost(reason: string): void {
    if (this.closing) return;
    this.client = undefined;
    this.lastError = reason;
    this.opts.log('warn', `MCP server ${this.name} disconnected: ${reason}`);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.closing) return;
    const delay = this.opts.retry ? this.opts.backoffMs[this.failures] : undefined;
    this.failures++;
    if (delay === undefined) {
      if (this.opts.retry) this.opts.log('warn', `MCP server ${this.name} failed: ${this.lastError ?? 'unknown error'} (${this.transport === 'stdio' ? `log: ${this.logFile}; ` : ''}/mcp reconnect ${this.name} tries again)`);
      this.status = 'failed';
      this.settle();
      this.ready = this.newReady();
      this.opts.onChange();
      return;
    }
    if (this.status === 'connected') this.ready = this.newReady();
    // A start that fails is said at once (stderr in a headless run, a log event in the UIs), not only when
    // the retries run out; later attempts are said once they all failed.
    if (!this.everConnected && this.failures === 1) {
      this.opts.log('warn', `MCP server ${this.name} failed to start: ${this.lastError ?? 'unknown error'}; retrying${this.logNote}`);
    }
    this.status = 'reconnecting';
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
    this.opts.onChange();
  }

  /**
   * Settles when the server is connected or has failed for good (at once if it is either now); a wait on a
   * server that is connecting or reconnecting.
   */
  whenSettled(): Promise<void> {
    return this.status === 'connecting' || this.status === 'reconnecting' || this.status === 'needs-auth' ? this.ready : Promise.resolve();
  }

  /** Waits for the connection (a call made while it connects or reconnects), up to the connect timeout. */
  private async connected(signal?: AbortSignal): Promise<Client> {
    if (this.status === 'connecting' || this.status === 'reconnecting' || this.status === 'needs-auth') {
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      await Promise.race([
        this.ready,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.opts.connectTimeoutMs);
          onAbort = resolve;
          signal?.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
    if (this.status !== 'connected' || !this.client) {
      throw new Error(`MCP server ${this.name} is ${this.status}${this.lastError ? ` (${this.lastError})` : ''}`);
    }
    return this.client;
  }

  async callTool(
    tool: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number; onProgress(progress: { progress: number; total?: number; message?: string }): void },
  ): Promise<McpCallResult> {
    return holdOpen(() => this.call(tool, args, opts));
  }

  private async call(
    tool: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number; onProgress(progress: { progress: number; total?: number; message?: string }): void },
  ): Promise<McpCallResult> {
    const client = await this.connected(opts.signal);
    try {
      return (await client.callTool({ name: tool, arguments: args }, undefined, {
        signal: opts.signal,
        timeout: opts.timeoutMs,
        resetTimeoutOnProgress: true,
        onprogress: opts.onProgress,
      })) as McpCallResult;
    } catch (err) {
      if (isTimeout(err)) void this.checkAlive(client);
      throw new Error(`MCP server ${this.name}: ${describeCallError(err, opts.timeoutMs, this.lastError)}`);
    }
  }

  readResource(uri: string, timeoutMs: number): Promise<Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>> {
    return holdOpen(async () => {
      const client = await this.connected();
      const result = await client.readResource({ uri }, { timeout: timeoutMs });
      return result.contents as Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>;
    });
  }

  getPrompt(name: string, args: Record<string, string>, timeoutMs: number) {
    return holdOpen(async () => {
      const client = await this.connected();
      return client.getPrompt({ name, arguments: args }, { timeout: timeoutMs });
    });
  }

  /** After a call timed out: a server that does not answer a ping either is hung, and is restarted. */
  private async checkAlive(client: Client): Promise<void> {
    try {
      await client.ping({ timeout: 3000 });
    } catch {
      if (this.client !== client) return;
      this.opts.log('warn', `MCP server ${this.name} does not answer; restarting it`);
      this.lastError = 'the server stopped answering';
      this.client = undefined;
      await client.close().catch(() => undefined);
      this.scheduleRetry();
    }
  }

  /** Drops the connection and connects again at once (`/mcp reconnect`). */
  async reconnect(): Promise<void> {
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    this.failures = 0;
    this.status = 'connecting';
    this.ready = this.newReady();
    await this.connect();
  }

  close(): Promise<void> {
    return holdOpen(() => this.shutdown());
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    clearTimeout(this.retryTimer);
    this.status = 'closed';
    const client = this.client;
    this.client = undefined;
    this.callback?.close();
    this.settle();
    await client?.close().catch(() => undefined);
  }
}

/**
 * The SDK's per-request timers would keep a finished run alive until a slow server answers `initialize`;
 * whoever waits on a request holds the process open instead (keep-alive.ts). These are the SDK's internal
 * `_setupTimeout` / `_resetTimeout` of its `Protocol` class (the SDK version is pinned exactly).
 */
function unrefTimeouts(client: Client): void {
  const internals = client as unknown as {
    _setupTimeout(id: number, ...rest: unknown[]): void;
    _resetTimeout(id: number): boolean;
    _timeoutInfo: Map<number, { timeoutId: NodeJS.Timeout }>;
  };
  const setup = internals._setupTimeout.bind(client);
  const reset = internals._resetTimeout.bind(client);
  internals._setupTimeout = (id, ...rest) => {
    setup(id, ...rest);
    internals._timeoutInfo.get(id)?.timeoutId.unref();
  };
  internals._resetTimeout = (id) => {
    const result = reset(id);
    internals._timeoutInfo.get(id)?.timeoutId.unref();
    return result;
  };
}

/** Every item of a paginated list (tools/list, prompts/list), page after page until the server gives no cursor. */
async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const got = await page(cursor);
    items.push(...got.items);
    cursor = got.next;
  } while (cursor);
  return items;
}

/** An error's message; for a failed fetch (`fetch failed`, as fetch says it) its cause's, which says what happened (connect ECONNREFUSED …). */
function errorMessage(err: unknown): string {
  if (err instanceof TypeError && err.message === 'fetch failed' && err.cause instanceof Error) return err.cause.message;
  return baseMessage(err);
}

function isUnauthorized(err: unknown): boolean {
  return (err instanceof StreamableHTTPError && err.code === 401) || (err instanceof SseError && err.code === 401);
}

/** The error of a failed connection attempt, with the HTTP status when a remote server answered with one. */
function describeConnectError(err: unknown): string {
  const message = errorMessage(err);
  const status = err instanceof StreamableHTTPError || err instanceof SseError ? err.code : undefined;
  return typeof status === 'number' && status > 0 && !message.includes(String(status)) ? `HTTP ${status}: ${message}` : message;
}

function isTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === -32001;
}

function describeCallError(err: unknown, timeoutMs: number, lastError: string | undefined): string {
  if (isTimeout(err)) return `the call timed out after ${timeoutMs} ms`;
  const message = errorMessage(err);
  if (/connection closed/i.test(message)) return `the connection closed during the call${lastError ? ` (${lastError})` : ''}`;
  return message;
}
