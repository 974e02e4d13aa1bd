/**
 * tool-web-search: `web_search`. With the Anthropic provider and no other backend, the request carries
 * Anthropic's server tool (`web_search_20250305`): the API searches, and its results and the answer's
 * citations stay in the history. Otherwise a search backend (the `backend` option, a `web-search-backend`
 * service, or a SearXNG instance) answers a client tool. Off wherever the permission policy denies it.
 */
import { z } from 'zod';
import { definePlugin, defineTool, type ContentBlock, type Kernel, type Session, type ToolDefinition, type Turn } from '../../kernel/index.js';
import { filterHits, searxngBackend, type WebSearchBackend, type WebSearchHit } from './backend.js';

export type { WebSearchBackend, WebSearchHit } from './backend.js';

const NAME = 'tool-web-search';

export interface WebSearchConfig {
  /** Searches the model may run per request (server tool). Default 5. */
  maxUses?: number;
  /** Only results from these domains (and their subdomains). */
  allowedDomains?: string[];
  /** Never results from these domains. */
  blockedDomains?: string[];
  /** A SearXNG instance to search with instead of Anthropic's server tool. */
  searxng?: string;
}

export interface WebSearchPluginOptions extends WebSearchConfig {
  backend?: WebSearchBackend;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    webSearch?: WebSearchConfig;
  }
}

declare module '../../kernel/types.js' {
  interface AgentEventMap {
    /** A search ran (server side or through a backend), for frontends to show its sources. */
    web_search: { query: string; results: Array<{ title: string; url: string }>; citations: Array<{ title: string | null; url: string; citedText: string }> };
  }
}

const configSchema = z
  .object({
    maxUses: z.number().int().positive(),
    allowedDomains: z.array(z.string().min(1)),
    blockedDomains: z.array(z.string().min(1)),
    searxng: z.string().url(),
  })
  .partial()
  .strict()
  .refine((c) => !(c.allowedDomains?.length && c.blockedDomains?.length), { message: 'allowedDomains and blockedDomains cannot both be set', path: ['blockedDomains'] });

const input = z.object({
  query: z.string().min(2).describe('The search query'),
  allowed_domains: z.array(z.string()).optional().describe('Only results from these domains'),
  blocked_domains: z.array(z.string()).optional().describe('Never results from these domains'),
});

const DESCRIPTION = 'Search the web for current information (documentation, releases, error messages) beyond your training data. Returns result titles, URLs and snippets; cite the URLs you use.';

export default definePlugin((opts: WebSearchPluginOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { webSearch: configSchema },
  apply(kernel) {
    const settings = (): WebSearchConfig => ({ ...kernel.config.webSearch, ...opts });
    const backend = (): WebSearchBackend | undefined => {
      if (opts.backend) return opts.backend;
      const offered = kernel.services.get('web-search-backend') as WebSearchBackend | undefined;
      if (offered && typeof offered.search === 'function') return offered;
      const searx = settings().searxng;
      // Through the `network` service's proxy when one is set (it loads nothing otherwise).
      const fetchVia: typeof fetch = async (input, init) => {
        const network = await kernel.services.get('network')?.load();
        return network ? network.fetch(input, init) : fetch(input, init);
      };
      return searx ? searxngBackend(searx, fetchVia) : undefined;
    };

    const clientTool = defineTool({
      name: 'web_search',
      description: DESCRIPTION,
      permission: 'network',
      input,
      async execute(args, ctx) {
        const engine = backend();
        if (!engine) return { content: 'web_search: no search backend is configured and the provider runs no server-side search.', isError: true };
        const cfg = settings();
        const domains = {
          allowedDomains: [...(cfg.allowedDomains ?? []), ...(args.allowed_domains ?? [])],
          blockedDomains: [...(cfg.blockedDomains ?? []), ...(args.blocked_domains ?? [])],
        };
        let hits: WebSearchHit[];
        try {
          hits = filterHits(await engine.search(args.query, { ...domains, signal: ctx.signal }), domains);
        } catch (err) {
          return { content: `web_search (${engine.name}): ${(err as Error).message}`, isError: true };
        }
        ctx.emit({ type: 'web_search', query: args.query, results: hits.map(({ title, url }) => ({ title, url })), citations: [] });
        if (hits.length === 0) return { content: `No results for "${args.query}".` };
        const lines = hits.slice(0, 10).map((h, i) => `${i + 1}. ${h.title}\n   ${h.url}${h.snippet ? `\n   ${h.snippet.replace(/\s+/g, ' ').slice(0, 300)}` : ''}`);
        return { content: `Results for "${args.query}" (${engine.name}):\n${lines.join('\n')}`, display: { results: hits } };
      },
    });
    kernel.tools.register(clientTool);

    let serverTool: ToolDefinition | undefined;
    const serverVariant = (): ToolDefinition => {
      if (serverTool) return serverTool;
      const cfg = settings();
      const spec: Record<string, unknown> & { type: string; name: string } = { type: 'web_search_20250305', name: 'web_search', max_uses: cfg.maxUses ?? 5 };
      if (cfg.allowedDomains?.length) spec.allowed_domains = cfg.allowedDomains;
      if (cfg.blockedDomains?.length) spec.blocked_domains = cfg.blockedDomains;
      serverTool = { ...clientTool, serverTool: spec };
      return serverTool;
    };

    kernel.hooks.selectTools.tapPromise(NAME, async (tools, turn) => {
      if (!tools.some((t) => t.name === 'web_search')) return tools;
      if (backend()) return tools;
      const provider = kernel.config.provider ?? 'anthropic';
      // The server tool runs inside the API call, where nobody can be asked: it is left out where the user
      // refused web search (a deny rule, plan mode, "deny for this session").
      const off = provider !== 'anthropic' || deniedNow(kernel, turn);
      return off ? tools.filter((t) => t.name !== 'web_search') : tools.map((t) => (t.name === 'web_search' ? serverVariant() : t));
    });

    kernel.hooks.event.tap(NAME, (event) => {
      if (event.type !== 'assistant_message') return;
      for (const search of serverSearches(event.response.content)) kernel.emit({ type: 'web_search', ...search });
    });
  },
}));

interface DenialLogLike {
  isDenied?(session: Session, toolName: string): boolean;
}

/**
 * Whether the user has refused web search for this turn without asking anyone: plan mode (no network) or
 * a session deny rule ("Deny, and don't ask again", denial-log). A bare deny rule has already taken the tool out (the permissions plugin's
 * selectTools tap runs first). The prePermission hook is not consulted: its taps may run user hooks.
 */
function deniedNow(kernel: Kernel, turn: Turn): boolean {
  const session = turn.session;
  if (session.permissionMode === 'plan') return true;
  const log = kernel.services.get('denial-log') as DenialLogLike | undefined;
  return typeof log?.isDenied === 'function' && log.isDenied(session, 'web_search');
}

/** The searches a response ran server side, with their results and the citations the answer makes. */
export function serverSearches(content: ContentBlock[]): Array<{ query: string; results: Array<{ title: string; url: string }>; citations: Array<{ title: string | null; url: string; citedText: string }> }> {
  const citations: Array<{ title: string | null; url: string; citedText: string }> = [];
  for (const block of content) {
    if (block.type !== 'text' || !block.citations) continue;
    for (const c of block.citations) if (c.type === 'web_search_result_location') citations.push({ title: c.title, url: c.url, citedText: c.cited_text });
  }
  const searches = [];
  for (const block of content) {
    if (block.type !== 'server_tool_use' || block.name !== 'web_search') continue;
    const result = content.find((b) => b.type === 'web_search_tool_result' && b.tool_use_id === block.id);
    const results = result && result.type === 'web_search_tool_result' && Array.isArray(result.content) ? result.content.map((r) => ({ title: r.title, url: r.url })) : [];
    const query = typeof (block.input as { query?: unknown })?.query === 'string' ? (block.input as { query: string }).query : '';
    searches.push({ query, results, citations });
  }
  return searches;
}
