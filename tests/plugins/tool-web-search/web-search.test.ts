import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ContentBlock } from '../../../kernel/index.js';
import toolWebSearch, { serverSearches, type WebSearchBackend } from '../../../plugins/tool-web-search/index.js';
import { filterHits, hostMatches } from '../../../plugins/tool-web-search/backend.js';
import { harness, textOf, type Harness } from '../tools-fs/harness.js';

let h: Harness | undefined;
let server: http.Server | undefined;
afterEach(async () => {
  h?.cleanup();
  h = undefined;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe('web search backends', () => {
  it('matches a domain and its subdomains only', () => {
    expect(hostMatches('https://docs.nodejs.org/api', 'nodejs.org')).toBe(true);
    expect(hostMatches('https://nodejs.org.evil.com/', 'nodejs.org')).toBe(false);
    expect(hostMatches('not a url', 'nodejs.org')).toBe(false);
    const hits = [{ title: 'a', url: 'https://a.org/x' }, { title: 'b', url: 'https://b.org/y' }];
    expect(filterHits(hits, { allowedDomains: ['a.org'] })).toEqual([hits[0]]);
    expect(filterHits(hits, { blockedDomains: ['a.org'] })).toEqual([hits[1]]);
  });

  it('calls a backend given as an option with the domain lists, and publishes a web_search event', async () => {
    const seen: unknown[] = [];
    const backend: WebSearchBackend = {
      name: 'test-engine',
      async search(query, opts) {
        seen.push({ query, allowed: opts.allowedDomains, blocked: opts.blockedDomains });
        return [{ title: 'Kept', url: 'https://docs.example.org/a', snippet: 'one\n two' }, { title: 'Dropped', url: 'https://other.org/' }];
      },
    };
    h = await harness([toolWebSearch({ backend, allowedDomains: ['example.org'] })]);
    const result = await h.run('web_search', { query: 'anything', blocked_domains: ['spam.org'] });
    expect(seen).toEqual([{ query: 'anything', allowed: ['example.org'], blocked: ['spam.org'] }]);
    expect(textOf(result)).toBe('Results for "anything" (test-engine):\n1. Kept\n   https://docs.example.org/a\n   one two');
    expect(h.events.find((e) => e.type === 'web_search')).toMatchObject({ query: 'anything', results: [{ title: 'Kept', url: 'https://docs.example.org/a' }] });
  });

  it('names a SearXNG instance that fails, and says when nothing was found', async () => {
    let status = 500;
    server = http.createServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [] }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    h = await harness([toolWebSearch({ searxng: url })]);
    expect(await h.run('web_search', { query: 'x y' })).toEqual({
      content: `web_search (searxng): SearXNG at ${url} answered HTTP 500 (is the json format enabled in its settings.yml?)`,
      isError: true,
    });
    status = 200;
    expect(textOf(await h.run('web_search', { query: 'x y' }))).toBe('No results for "x y".');
  });

  it('reads the searches, results and citations of a response that searched server side', () => {
    const content = [
      { type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'q' } },
      { type: 'web_search_tool_result', tool_use_id: 's1', content: [{ type: 'web_search_result', title: 'T', url: 'https://t.org', encrypted_content: 'e', page_age: null }] },
      { type: 'text', text: 'x', citations: [{ type: 'web_search_result_location', title: 'T', url: 'https://t.org', cited_text: 'c', encrypted_index: 'i' }] },
    ] as unknown as ContentBlock[];
    expect(serverSearches(content)).toEqual([{ query: 'q', results: [{ title: 'T', url: 'https://t.org' }], citations: [{ title: 'T', url: 'https://t.org', citedText: 'c' }] }]);
  });
});
