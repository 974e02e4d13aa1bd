import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest, type ScriptedTurn } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { ndjson, runKeel } from '../helpers/cli.js';

const prepare = useScriptedProjects();

const RESULT = {
  type: 'web_search_result',
  url: 'https://nodejs.org/en/blog/release/v22.0.0',
  title: 'Node.js 22 is now available!',
  encrypted_content: 'EncryptedBlob123',
  page_age: 'April 24, 2024',
};
const CITATION = {
  type: 'web_search_result_location',
  url: RESULT.url,
  title: RESULT.title,
  encrypted_index: 'Eo8BCioIAhgB',
  cited_text: 'Node.js 22 ships with V8 12.4',
};

/** A response in which the API searched server side, then answered citing a result. */
const searched: ScriptedTurn = {
  content: [
    { type: 'text', text: 'Let me search.' },
    { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'node 22 release v8 version' } },
    { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [RESULT] },
    { type: 'text', text: 'Node.js 22 ships V8 12.4.', citations: [CITATION] },
  ],
};

const tools = (r: RecordedRequest) => r.body.tools as Array<{ name: string; type?: string; [k: string]: unknown }>;

let searx: http.Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (searx ? searx.close(() => resolve()) : resolve()));
  searx = undefined;
});

describe('web search', () => {
  it('passes Anthropic\'s server tool through; results and citations round-trip in the history', async () => {
    const { env, ws, server } = await prepare([searched]);
    const run = await runKeel(['-p', 'which V8 does node 22 use?', '--output-format', 'stream-json'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const search = tools(server.messageRequests()[0]).find((t) => t.name === 'web_search');
    expect(search).toEqual({ type: 'web_search_20250305', name: 'web_search', max_uses: 5 });
    const lines = ndjson(run.stdout);
    const assistant = lines.find((l) => l.type === 'assistant');
    expect(assistant.message.content.map((b: { type: string }) => b.type)).toEqual(['text', 'server_tool_use', 'web_search_tool_result', 'text']);
    expect(assistant.message.content[3].citations).toEqual([CITATION]);
    expect(lines.at(-1)).toMatchObject({ type: 'result', result: 'Let me search.Node.js 22 ships V8 12.4.' });

    server.push(say('It was V8 12.4.'));
    const again = await runKeel(['-p', 'remind me', '--continue'], { cwd: ws.dir, env });
    expect(again.code).toBe(0);
    const history = server.messageRequests()[1].body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    const replayed = history[1]!.content;
    expect(replayed[1]).toMatchObject({ type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'node 22 release v8 version' } });
    expect(replayed[2]).toMatchObject({ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [RESULT] });
    expect(replayed[3]).toMatchObject({ type: 'text', text: 'Node.js 22 ships V8 12.4.', citations: [CITATION] });
  }, 90_000);

  it('sends the configured domain list, and is off where permissions deny it or in plan mode', async () => {
    const { env, ws, server } = await prepare([say('one'), say('two'), say('three')]);
    ws.write('agent.config.ts', `export default { webSearch: { allowedDomains: ['nodejs.org'], maxUses: 2 } };\n`);
    expect((await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env })).code).toBe(0);
    expect(tools(server.messageRequests()[0]).find((t) => t.name === 'web_search')).toEqual({ type: 'web_search_20250305', name: 'web_search', max_uses: 2, allowed_domains: ['nodejs.org'] });

    expect((await runKeel(['-p', 'hi', '--permission-mode', 'plan', '--trust'], { cwd: ws.dir, env })).code).toBe(0);
    expect(tools(server.messageRequests()[1]).map((t) => t.name)).not.toContain('web_search');

    ws.write('agent.config.ts', `export default { permissions: { deny: ['web_search'] } };\n`);
    expect((await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env })).code).toBe(0);
    expect(tools(server.messageRequests()[2]).map((t) => t.name)).not.toContain('web_search');
  }, 90_000);

  it('names the config key when both domain lists are set', async () => {
    const { env, ws } = await prepare([say('never')]);
    ws.write('agent.config.ts', `export default { webSearch: { allowedDomains: ['a.org'], blockedDomains: ['b.org'] } };\n`);
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('webSearch.blockedDomains: allowedDomains and blockedDomains cannot both be set');
  });

  it('answers through a SearXNG backend instead, filtering blocked domains', async () => {
    const queries: string[] = [];
    searx = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      queries.push(`${url.pathname}?${url.searchParams.toString()}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [
        { title: 'Node 22 notes', url: 'https://nodejs.org/en/blog/release/v22.0.0', content: 'V8 12.4 and more' },
        { title: 'Spam', url: 'https://spam.example.com/node', content: 'ads' },
      ] }));
    });
    await new Promise<void>((resolve) => searx!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(searx.address() as AddressInfo).port}`;
    const { env, ws, server } = await prepare([callTool('web_search', { query: 'node 22 v8' }), say('V8 12.4')]);
    ws.write('agent.config.ts', `export default { webSearch: { searxng: ${JSON.stringify(base)}, blockedDomains: ['example.com'] } };\n`);
    const run = await runKeel(['-p', 'search it', '--permission-mode', 'auto', '--trust'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(queries).toEqual(['/search?q=node+22+v8&format=json']);
    const sent = tools(server.messageRequests()[0]).find((t) => t.name === 'web_search')!;
    expect(sent.type).toBeUndefined();
    expect(sent.input_schema).toMatchObject({ properties: { query: { type: 'string' } } });
    const messages = server.messageRequests()[1].body.messages as Array<{ content: Array<{ type: string; content: string }> }>;
    const result = messages.at(-1)!.content[0]!.content;
    expect(result).toBe('Results for "node 22 v8" (searxng):\n1. Node 22 notes\n   https://nodejs.org/en/blog/release/v22.0.0\n   V8 12.4 and more');
  }, 90_000);
});
