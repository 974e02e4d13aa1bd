/**
 * All configured servers of one kernel: connections started in the background, their tools attached to
 * `kernel.tools` and their prompts to `kernel.commands` as they arrive, changed or go. Loaded (with the MCP
 * SDK) only when a server is configured.
 */
import { errorMessage, runAgent, type CommandDefinition, type Kernel, type McpServerConfig } from '../../kernel/index.js';
import { Connection, DEFAULT_BACKOFF_MS, type Status } from './connection.js';
import { mcpName, toolHash, toToolDefinition } from './tools.js';
import { hintTrusted } from './policy.js';

export interface BridgeLimits {
  timeoutMs: number;
  connectTimeoutMs: number;
  maxResultBytes: number;
  maxMessageBytes: number;
  backoffMs?: number[];
  searchWaitMs: number;
  maxLogBytes: number;
}

export interface ServerStatus {
  name: string;
  status: Status;
  transport: string;
  tools: number;
  prompts: number;
  error?: string;
  logFile?: string;
}

const OWNER = 'mcp-bridge';

export class Bridge {
  readonly connections = new Map<string, Connection>();
  /** Attached names per server, and each tool's hash of what the user sees (description and schema). */
  private readonly attached = new Map<string, { tools: Set<string>; prompts: Set<string> }>();
  readonly hashes = new Map<string, string>();

  constructor(
    private readonly kernel: Kernel,
    servers: Record<string, McpServerConfig>,
    private readonly limits: BridgeLimits,
    retry = true,
  ) {
    // tool-bash's \`processes\` service, when present, tags each server so what it starts (a setsid grandchild) ends with Keel.
    const processes = kernel.services.get('processes') as { env(name?: string): Record<string, string> } | undefined;
    const network = kernel.services.get('network');
    for (const [name, config] of Object.entries(servers)) {
      const conn: Connection = new Connection(name, config, {
        spawnEnv: processes && (() => processes.env(`mcp/${name}`)),
        keelHome: kernel.config.keelHome,
        cwd: kernel.config.cwd,
        retry,
        backoffMs: limits.backoffMs ?? DEFAULT_BACKOFF_MS,
        connectTimeoutMs: limits.connectTimeoutMs,
        maxMessageBytes: limits.maxMessageBytes,
        maxLogBytes: limits.maxLogBytes,
        log: (level, message) => kernel.log(level, message, OWNER),
        onChange: () => this.sync(conn),
        ...(network ? { fetch: (input: string | URL, init?: RequestInit) => network.fetch(input, init, { identity: true, unref: true }) } : {}),
      });
      this.connections.set(name, conn);
    }
  }

  /** Starts every connection concurrently; the promise (for `keel mcp list`) settles when all first attempts end. */
  start(): Promise<void> {
    this.started ??= Promise.all([...this.connections.values()].map((conn) => conn.start())).then(() => undefined);
    return this.started;
  }

  /** Settles when every server's first connection attempt has ended. */
  started?: Promise<void>;

  /** Settles when the first attempts have ended and no server is re-reading its lists. */
  async settled(): Promise<void> {
    await this.started;
    await Promise.all([...this.connections.values()].map((conn) => conn.refreshing));
  }

  /**
   * Waits, at most `ms` (or until `signal` aborts), for the servers that are connecting or reconnecting to
   * connect or fail for good.
   */
  async untilSettled(ms: number, signal?: AbortSignal): Promise<void> {
    const waiting = [...this.connections.values()].map((conn) => conn.whenSettled());
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    await Promise.race([
      Promise.all(waiting),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
        onAbort = resolve;
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }

  /** One line per server that is not connected now: its state and why, for a search that could not find its tools. */
  unavailable(): string[] {
    return [...this.connections.values()]
      .filter((conn) => conn.status !== 'connected' && conn.status !== 'closed')
      .map((conn) => {
        const why = conn.lastError ? `: ${conn.lastError}` : '';
        if (conn.status === 'failed') return `MCP server ${conn.name} failed${why}${conn.logNote}; its tools are not available (the user can retry with /mcp reconnect ${conn.name})`;
        if (conn.status === 'needs-auth') return `MCP server ${conn.name} is waiting for the user to authorize it; its tools are not available yet`;
        if (conn.status === 'reconnecting') return `MCP server ${conn.name} is not connected (it is retrying${why})${conn.logNote}; its tools are not available yet`;
        return `MCP server ${conn.name} is still connecting; its tools are not available yet`;
      });
  }

  /** Makes the registries match what the server offers now. */
  private sync(conn: Connection): void {
    const mine = this.attached.get(conn.name) ?? { tools: new Set<string>(), prompts: new Set<string>() };
    this.attached.set(conn.name, mine);
    const wanted = new Map(conn.tools.map((tool) => [mcpName(conn.name, tool.name), tool]));
    for (const name of mine.tools) {
      const tool = wanted.get(name);
      if (!tool || this.hashes.get(name) !== toolHash(tool)) {
        this.kernel.tools.detach(name);
        mine.tools.delete(name);
        this.hashes.delete(name);
      }
    }
    for (const [name, tool] of wanted) {
      if (mine.tools.has(name)) continue;
      try {
        this.kernel.tools.attach(toToolDefinition(conn, tool, this.limits, (toolName) => hintTrusted(this.kernel, toolName)), OWNER);
        mine.tools.add(name);
        this.hashes.set(name, toolHash(tool));
      } catch (err) {
        this.kernel.log('warn', `MCP tool ${tool.name} of ${conn.name} is left out: ${errorMessage(err)}`, OWNER);
      }
    }
    const prompts = new Map(conn.prompts.map((prompt) => [mcpName(conn.name, prompt.name), prompt]));
    for (const name of mine.prompts) {
      if (!prompts.has(name)) {
        this.kernel.commands.detach(name);
        mine.prompts.delete(name);
      }
    }
    for (const [name, prompt] of prompts) {
      if (mine.prompts.has(name)) continue;
      try {
        this.kernel.commands.attach(this.promptCommand(conn, name, prompt.name, prompt.description, prompt.arguments ?? []), OWNER);
        mine.prompts.add(name);
      } catch (err) {
        this.kernel.log('warn', `MCP prompt ${prompt.name} of ${conn.name} is left out: ${errorMessage(err)}`, OWNER);
      }
    }
    this.kernel.emit({ type: 'mcp_status', server: conn.name, status: conn.status, tools: conn.tools.length, error: conn.lastError });
  }

  /** `/mcp__server__prompt a b` or `key=value …`: the prompt's messages become the request. */
  private promptCommand(conn: Connection, name: string, prompt: string, description: string | undefined, params: Array<{ name: string; required?: boolean; description?: string }>): CommandDefinition {
    const usage = params.map((p) => (p.required ? `<${p.name}>` : `[${p.name}]`)).join(' ');
    return {
      name,
      description: `${description ?? `the ${prompt} prompt`} (MCP server ${conn.name})${usage ? ` — ${usage}` : ''}`,
      run: async (args, ctx) => {
        const values = promptArguments(args, params.map((p) => p.name));
        const missing = params.filter((p) => p.required && values[p.name] === undefined).map((p) => p.name);
        if (missing.length) throw new Error(`/${name}: missing ${missing.join(', ')} (usage: /${name} ${usage})`);
        const result = await conn.getPrompt(prompt, values, conn.config.timeout ?? this.limits.timeoutMs);
        const text = result.messages
          .map((m) => (m.content.type === 'text' ? m.content.text : m.content.type === 'resource' && 'text' in m.content.resource ? String(m.content.resource.text) : `[${m.content.type} content]`))
          .join('\n\n');
        // As blocks, not a string: the server wrote this text, so `@server:uri` in it attaches nothing.
        const run = await runAgent(ctx.kernel, ctx.session, [{ type: 'text', text }], { signal: ctx.signal });
        if (run.isError) throw new Error(run.error ?? run.subtype);
        return run.result;
      },
    };
  }

  status(): ServerStatus[] {
    return [...this.connections.values()].map((conn) => ({
      name: conn.name,
      status: conn.status,
      transport: conn.transport,
      tools: conn.tools.length,
      prompts: conn.prompts.length,
      error: conn.lastError,
      logFile: conn.transport === 'stdio' ? conn.logFile : undefined,
    }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((conn) => conn.close()));
  }
}

/** `key=value` pairs, or words in the order of the prompt's arguments (the last takes the rest). */
export function promptArguments(args: string, names: string[]): Record<string, string> {
  const values: Record<string, string> = {};
  const text = args.trim();
  if (!text) return values;
  if (/^[\w-]+=/.test(text)) {
    for (const match of text.matchAll(/([\w-]+)=("([^"]*)"|\S+)/g)) values[match[1]!] = match[3] ?? match[2]!;
    return values;
  }
  const words = text.split(/\s+/);
  names.forEach((name, i) => {
    if (i >= words.length) return;
    values[name] = i === names.length - 1 ? words.slice(i).join(' ') : words[i]!;
  });
  return values;
}
