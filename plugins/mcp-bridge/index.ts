/**
 * The MCP bridge: every configured MCP server's tools (deferred, `mcp__<server>__<tool>`), resources
 * (`@server:uri` in a prompt) and prompts (`/mcp__server__prompt`). Servers connect in the background when a
 * session starts; the bridge's code and the SDK load only when a server is configured, `keel mcp`'s when it runs.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  definePlugin,
  errorMessage,
  Stage,
  type ContentBlockParam,
  type Kernel,
  type McpServerConfig,
  type MessageParam,
  type Session,
} from '../../kernel/index.js';
import { holdOpen } from './keep-alive.js';
import type { Bridge, BridgeLimits, ServerStatus } from './bridge.js';
import { projectFile, serverLayers } from './settings.js';
import { resourceRefusal } from './policy.js';
import { managedServers } from './managed.js';

export interface McpBridgeOptions {
  /** Milliseconds a tool call may take when its server sets no `timeout` (default `MCP_TOOL_TIMEOUT` or 120 000). */
  timeoutMs?: number;
  /** Milliseconds to connect and list tools (default `MCP_TIMEOUT` or 30 000). */
  connectTimeoutMs?: number;
  /** Bytes of one call's result kept before the compaction tiers see it (default 1 000 000). */
  maxResultBytes?: number;
  /** Largest JSON-RPC message read from a stdio server (default 64 MB). */
  maxMessageBytes?: number;
  /** Delays between reconnection attempts (default 0.5, 1, 2, 4, 8 s; then the server is `failed`). */
  backoffMs?: number[];
  /** Milliseconds a `tool_search` waits for servers that failed and are retrying (default `MCP_SEARCH_WAIT` or 5 000). */
  searchWaitMs?: number;
  /** Bytes of a stdio server's stderr log before it is rotated (default 10 MB; one previous file is kept). */
  maxLogBytes?: number;
}

const NAME = 'mcp-bridge';
/** When no request follows the session's start at once, servers start after this long anyway. */
const START_DELAY_MS = 200;

/** What the bridge offers other plugins and frontends as the `mcp` service. */
export interface McpService {
  /** Each configured server's state (empty until a session starts them). */
  status(): ServerStatus[];
  /** Disconnects every server and stops stdio servers' process groups. */
  close(): Promise<void>;
  /**
   * Reads a resource for `session`, under the server's permission rules (a deny rule `mcp__server` or
   * `mcp__server__*` refuses it): the only way the bridge reads resources, for any plugin that offers it.
   */
  readResource(server: string, uri: string, session: Session): Promise<ResourceContent[]>;
}

/** One item of a resource: text, or a base64 blob. */
export interface ResourceContent {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

declare module '../../kernel/types.js' {
  interface Services {
    mcp: McpService;
  }
  interface AgentEventMap {
    /** A progress notification of a running MCP call. */
    mcp_progress: { id: string; server: string; tool: string; progress: number; total?: number; message?: string };
    /** A server connected, changed its lists, or failed. */
    mcp_status: { server: string; status: string; tools: number; error?: string };
  }
}

function envMs(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

function real(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

/** Per session: the hash of each MCP tool as it was when the user allowed it for the session. */
function approvedHashes(session: Session): Map<string, string> {
  let map = session.data.get(NAME) as Map<string, string> | undefined;
  if (!map) {
    map = new Map();
    session.data.set(NAME, map);
  }
  return map;
}

const MENTION = /(?:^|\s)@([\w-]+):(\S+)/g;

export default definePlugin((opts: McpBridgeOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  configLayers: (ctx) => serverLayers(ctx),
  // Set by `--strict-mcp-config` (see settings.ts): then the only servers.
  config: { strictMcpServers: z.record(z.string(), z.unknown()) },
  apply(kernel) {
    const limits: BridgeLimits = {
      timeoutMs: opts.timeoutMs ?? envMs('MCP_TOOL_TIMEOUT') ?? 120_000,
      connectTimeoutMs: opts.connectTimeoutMs ?? envMs('MCP_TIMEOUT') ?? 30_000,
      maxResultBytes: opts.maxResultBytes ?? 1_000_000,
      maxMessageBytes: opts.maxMessageBytes ?? 64 * 1024 * 1024,
      backoffMs: opts.backoffMs,
      searchWaitMs: opts.searchWaitMs ?? envMs('MCP_SEARCH_WAIT') ?? 5_000,
      maxLogBytes: opts.maxLogBytes ?? 10 * 1024 * 1024,
    };
    kernel.protected.add({ path: real(projectFile(kernel.config.projectRoot)), why: 'MCP server config (it runs programs)' });

    let bridge: Bridge | undefined;
    let loading: Promise<Bridge | undefined> | undefined;
    // Servers managed settings do not allow never start (and are said so at the session's start); --strict-mcp-config
    // keeps only the servers its flags name.
    const { servers, blocked } = managedServers(kernel.config.managed, (kernel.config.strictMcpServers as typeof kernel.config.mcpServers | undefined) ?? kernel.config.mcpServers);
    const configured = Object.keys(servers).length > 0;

    /** Loads the SDK and starts every server, once per process; never waits for the servers. */
    const ensureBridge = (): Promise<Bridge | undefined> => {
      if (!configured) return Promise.resolve(undefined);
      loading ??= (async () => {
        const cold = await import('./cold.js');
        const listing = cold.announceProjectServers(kernel.config);
        if (listing) kernel.log('warn', listing, NAME);
        const { Bridge } = await cold.loadBridge();
        bridge = new Bridge(kernel, servers, limits);
        void bridge.start();
        return bridge;
      })().catch((err) => {
        kernel.log('error', `MCP servers could not start: ${errorMessage(err)}`, NAME);
        return undefined;
      });
      return loading;
    };

    // Servers start in the background once the first request is on its way (or soon after the session starts,
    // when no request comes at once, as in an interactive session), so their start-up never competes with it.
    let startTimer: NodeJS.Timeout | undefined;
    const startSoon = () => {
      clearTimeout(startTimer);
      void ensureBridge();
    };
    let toldBlocked = false;
    kernel.hooks.sessionStart.tapPromise(NAME, async () => {
      if (!toldBlocked) for (const line of blocked) kernel.log('warn', line, NAME);
      toldBlocked = true;
      if (!configured || loading) return;
      startTimer = setTimeout(startSoon, START_DELAY_MS);
      startTimer.unref();
    });

    // A search made while servers are still connecting waits for their first attempts (at most the connect
    // timeout), then a few seconds more for a server that failed and is retrying, so it can find their tools.
    kernel.hooks.toolExecute.tapPromise({ name: NAME, stage: Stage.EARLY }, async (call, turn) => {
      if (call.name !== 'tool_search' || !configured) return undefined;
      const ready = await ensureBridge();
      if (!ready) return undefined;
      let timer: NodeJS.Timeout | undefined;
      await holdOpen(async () => {
        await Promise.race([
          ready.settled(),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, limits.connectTimeoutMs);
            turn.signal.addEventListener('abort', () => resolve(), { once: true });
          }),
        ]);
        clearTimeout(timer);
        await ready.untilSettled(limits.searchWaitMs, turn.signal);
      });
      return undefined;
    });

    // The search's answer names every server that is not connected and why, so a tool that is not found because
    // its server failed is not taken for a tool that does not exist.
    kernel.hooks.toolResult.tapPromise(NAME, async (result, call) => {
      if (call.name !== 'tool_search' || !bridge) return result;
      const lines = bridge.unavailable();
      if (lines.length === 0) return result;
      const note = `\n\n${lines.join('\n')}`;
      const content = typeof result.content === 'string' ? `${result.content}${note}` : [...result.content, { type: 'text' as const, text: note.trimStart() }];
      return { ...result, content };
    });

    // `/mcp__server__prompt` typed (or passed to `-p`) before its server has connected waits for the servers, at
    // most the connect timeout, instead of being taken for an unknown command.
    kernel.commands.whenAttached(async (name) => {
      if (!configured || !name.startsWith('mcp__')) return;
      const ready = await ensureBridge();
      if (!ready) return;
      let timer: NodeJS.Timeout | undefined;
      await holdOpen(() => Promise.race([ready.settled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, limits.connectTimeoutMs)))]));
      clearTimeout(timer);
    });

    const readResource = async (server: string, uri: string, session: Session): Promise<ResourceContent[]> => {
      const refusal = resourceRefusal(kernel, server, session);
      if (refusal) {
        kernel.log('warn', `@${server}:${uri} was not read: ${refusal}`, NAME);
        throw new Error(refusal);
      }
      const ready = await ensureBridge();
      const conn = ready?.connections.get(server);
      if (!conn) throw new Error(configured && server in servers ? 'the MCP servers did not start' : `no MCP server named ${server}`);
      return conn.readResource(uri, conn.config.timeout ?? limits.timeoutMs);
    };

    // `@server:uri` attaches that resource, only in what the user typed: the prompt a frontend or SDK host
    // started the run with (its first turn), never text a model, a server, a hook or compaction wrote. A
    // sub-agent's prompt is its parent model's text, so a sub-agent attaches nothing.
    const typed = new WeakSet<MessageParam>();
    const promptsAreTyped = process.env.KEEL_SUBAGENT_MODE !== '1';

    // A tool whose description or schema changed since the user allowed it for the session is asked again.
    const pendingAsks = new Map<string, { session: Session; name: string; hash: string }>();
    kernel.hooks.prePermission.tapPromise({ name: NAME, stage: Stage.EARLY }, async (call, turn) => {
      const hash = bridge?.hashes.get(call.name);
      if (!hash) return undefined;
      pendingAsks.set(call.id, { session: turn.session, name: call.name, hash });
      const approved = approvedHashes(turn.session).get(call.name);
      const allowances = kernel.services.get('denial-log') as { isAllowed?(session: Session, name: string): boolean } | undefined;
      if (approved !== undefined && approved !== hash && allowances?.isAllowed?.(turn.session, call.name)) {
        return { behavior: 'ask', reason: `${call.name} changed since you allowed it: its description or input schema is different now` };
      }
      return undefined;
    });
    kernel.hooks.event.tap(NAME, (event) => {
      if (event.type === 'tools_bytes' && configured && !loading) startSoon();
      if (event.type === 'tool_end') pendingAsks.delete(event.call.id);
      if (event.type === 'user_message' && configured && promptsAreTyped) typed.add(event.message);
      if (event.type !== 'permission') return;
      const pending = pendingAsks.get(event.call.id);
      if (!pending) return;
      if (event.choice === 'allow_session' || (event.decision.behavior === 'allow' && !approvedHashes(pending.session).has(pending.name))) {
        approvedHashes(pending.session).set(pending.name, pending.hash);
      }
      if (event.decision.behavior === 'deny') pendingAsks.delete(event.call.id);
    });

    // The run's prompts are recorded by the event tap above (`user_message`).
    kernel.hooks.contextLoad.tapPromise(NAME, async (context, turn) => {
      const last = turn.session.messages[turn.session.messages.length - 1];
      if (!configured || !last || last.role !== 'user' || turn.index !== 1 || !typed.has(last) || typeof last.content !== 'string') return context;
      typed.delete(last);
      const mentions = [...last.content.matchAll(MENTION)].filter((m) => m[1]! in servers);
      if (mentions.length === 0) return context;
      const blocks: ContentBlockParam[] = [{ type: 'text', text: last.content }];
      for (const match of mentions) {
        const server = match[1]!;
        const uri = match[2]!.replace(/[.,;:!?)\]]+$/, '');
        try {
          for (const item of await readResource(server, uri, turn.session)) {
            if (typeof item.text === 'string') blocks.push({ type: 'text', text: `<resource server="${server}" uri="${item.uri}">\n${item.text}\n</resource>` });
            else if (item.blob && item.mimeType && /^image\/(png|jpeg|gif|webp)$/.test(item.mimeType)) {
              blocks.push({ type: 'image', source: { type: 'base64', media_type: item.mimeType as 'image/png', data: item.blob } });
            } else blocks.push({ type: 'text', text: `[resource ${item.uri} of type ${item.mimeType ?? 'unknown'} is binary and was not attached]` });
          }
        } catch (err) {
          blocks.push({ type: 'text', text: `[could not attach @${server}:${uri}: ${errorMessage(err)}]` });
        }
      }
      // The history keeps the attached message, so the resource is read once.
      (last as { content: MessageParam['content'] }).content = blocks;
      return { ...context, messages: context.messages.map((m) => (m === last ? { ...m, content: blocks } : m)) };
    });

    kernel.commands.register({
      name: 'mcp',
      description: 'MCP servers: status, tools and last error; /mcp reconnect <name> restarts one',
      async run(args) {
        const [verb, name] = args.trim().split(/\s+/);
        if (!configured) return 'No MCP servers configured.';
        const ready = await ensureBridge();
        if (!ready) return 'The MCP servers could not start (see the log).';
        await holdOpen(() => Promise.race([ready.started, new Promise((resolve) => setTimeout(resolve, limits.connectTimeoutMs).unref())]));
        if (verb === 'reconnect') {
          const conn = name ? ready.connections.get(name) : undefined;
          if (!conn) throw new Error(`/mcp reconnect: no server named "${name ?? ''}" (servers: ${[...ready.connections.keys()].join(', ')})`);
          await conn.reconnect();
          return `${name}: ${conn.status}, ${conn.tools.length} tools${conn.lastError ? `; last error: ${conn.lastError}` : ''}`;
        }
        if (verb) throw new Error(`/mcp: unknown argument "${verb}" (use /mcp or /mcp reconnect <name>)`);
        return ready
          .status()
          .map((s) => `${s.name}  ${s.status}  ${s.transport}  ${s.tools} tools${s.error ? `  error: ${s.error}` : ''}`)
          .join('\n');
      },
    });

    const service: McpService = {
      status: () => bridge?.status() ?? [],
      readResource,
      close: async () => {
        const current = await loading;
        await current?.close();
      },
    };
    kernel.services.provide('mcp', service);

    kernel.subcommands.register({
      name: 'mcp',
      description: 'manage MCP servers: list, get <name>, add <name> <command|url> [args…], remove <name>',
      usage: 'keel mcp list | get <name> | add <name> <command|url> [args…] | remove <name>',
      async run(args, ctx) {
        const { mcpSubcommand } = await import('./cold.js');
        return mcpSubcommand(kernel, args, ctx.io, limits);
      },
    });
  },
}));
