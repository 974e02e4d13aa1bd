/** The search-backend interface, domain filtering, and the SearXNG backend (a self-hosted engine). */

export interface WebSearchHit {
  title: string;
  url: string;
  snippet?: string;
}

export interface WebSearchOptions {
  allowedDomains?: string[];
  blockedDomains?: string[];
  signal: AbortSignal;
}

/**
 * Answers `web_search` instead of Anthropic's server tool: pass one as the plugin's `backend` option, offer
 * one as the `web-search-backend` service from another plugin, or configure `webSearch.searxng`.
 */
export interface WebSearchBackend {
  name: string;
  search(query: string, opts: WebSearchOptions): Promise<WebSearchHit[]>;
}

/** True when `url`'s host is `domain` or one of its subdomains. */
export function hostMatches(url: string, domain: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  const d = domain.toLowerCase().replace(/^\*\./, '').replace(/^https?:\/\//, '').split('/')[0]!;
  return host === d || host.endsWith(`.${d}`);
}

export function filterHits(hits: WebSearchHit[], opts: { allowedDomains?: string[]; blockedDomains?: string[] }): WebSearchHit[] {
  return hits.filter((hit) => {
    if (opts.allowedDomains?.length && !opts.allowedDomains.some((d) => hostMatches(hit.url, d))) return false;
    if (opts.blockedDomains?.some((d) => hostMatches(hit.url, d))) return false;
    return true;
  });
}

/** SearXNG's JSON API (`/search?q=…&format=json`; the instance must enable the json format). */
export function searxngBackend(baseUrl: string, fetchImpl: typeof fetch = (input, init) => fetch(input, init)): WebSearchBackend {
  return {
    name: 'searxng',
    async search(query, opts) {
      const url = new URL('search', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      const response = await fetchImpl(url, { signal: opts.signal, headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error(`SearXNG at ${baseUrl} answered HTTP ${response.status} (is the json format enabled in its settings.yml?)`);
      const body = (await response.json()) as { results?: Array<{ title?: unknown; url?: unknown; content?: unknown }> };
      if (!Array.isArray(body.results)) throw new Error(`SearXNG at ${baseUrl} answered without a results list`);
      return body.results
        .filter((r) => typeof r.url === 'string')
        .map((r) => ({ title: typeof r.title === 'string' ? r.title : String(r.url), url: String(r.url), ...(typeof r.content === 'string' ? { snippet: r.content } : {}) }));
    },
  };
}
