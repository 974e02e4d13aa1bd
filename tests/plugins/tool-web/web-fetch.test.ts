import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import queryService from '../../../plugins/query-service/index.js';
import toolWeb from '../../../plugins/tool-web/index.js';
import { say, startAnthropicServer } from '../../helpers/anthropic-server.js';
import { harness, textOf } from '../tools-fs/harness.js';

const PAGE = `<!doctype html><html><head><title>Docs</title><style>body{color:red}</style><script>alert(1)</script></head>
<body><h1>Widget API</h1><p>Call <code>widget.spin()</code> to <a href="/more">spin</a>.</p><ul><li>fast</li><li>safe</li></ul>
<pre><code>npm i widget</code></pre></body></html>`;
const LONG = `<html><body><h1>Long</h1>${Array.from({ length: 400 }, (_, i) => `<p>Paragraph ${i} about widgets and their many settings.</p>`).join('')}</body></html>`;

let server: http.Server;
let base: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const route = req.url ?? '/';
    const port = (server.address() as AddressInfo).port;
    if (route === '/page') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    if (route === '/long') return void res.writeHead(200, { 'content-type': 'text/html' }).end(LONG);
    if (route === '/redirect') return void res.writeHead(302, { location: '/page' }).end();
    if (route === '/loop') return void res.writeHead(301, { location: '/loop' }).end();
    if (route === '/away') return void res.writeHead(302, { location: `http://localhost:${port}/page` }).end();
    if (route === '/to-ftp') return void res.writeHead(302, { location: 'ftp://127.0.0.1/x' }).end();
    if (route === '/json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (route === '/binary') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([137, 80, 78, 71, 0, 0]));
    if (route === '/huge') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(50_000));
    if (route === '/slow') return; // never answers; the socket is destroyed in afterAll
    if (route === '/trickle') return void res.writeHead(200, { 'content-type': 'text/plain' }).write('the start of a page that never ends\n');
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

async function fetchWith(input: Record<string, unknown>, opts: Parameters<typeof toolWeb>[0] = {}, signal?: AbortSignal) {
  const h = await harness([toolWeb(opts)]);
  try {
    return await h.run('web_fetch', { prompt: 'what does it say?', ...input }, { signal });
  } finally {
    h.cleanup();
  }
}

describe('web_fetch', () => {
  it('converts HTML to markdown, without scripts and styles', async () => {
    const text = textOf(await fetchWith({ url: `${base}/page` }));
    expect(text).toContain(`${base}/page\n\n# Widget API`);
    expect(text).toContain('Call `widget.spin()` to [spin](/more).');
    expect(text).toContain('-   fast');
    expect(text).toContain('```\nnpm i widget\n```');
    expect(text).not.toContain('alert(1)');
    expect(text).not.toContain('color:red');
  });

  it('follows same-host redirects within limits', async () => {
    expect(textOf(await fetchWith({ url: `${base}/redirect` }))).toContain(`${base}/page (redirected from ${base}/redirect)\n\n# Widget API`);
    const loop = await fetchWith({ url: `${base}/loop` });
    expect(loop.isError).toBe(true);
    expect(textOf(loop)).toBe(`web_fetch: ${base}/loop redirected more than 5 times`);
    expect(textOf(await fetchWith({ url: `${base}/to-ftp` }))).toContain('which is not http(s)');
  });

  it('reports a redirect to another host instead of following it', async () => {
    const result = await fetchWith({ url: `${base}/away` });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/redirects \(302\) to another host: http:\/\/localhost:\d+\/page\nTo read it, call web_fetch again with that URL\./);
  });

  it('reports HTTP errors, binary content, and unreachable hosts', async () => {
    expect(textOf(await fetchWith({ url: `${base}/missing` }))).toBe(`web_fetch: ${base}/missing answered 404 Not Found.`);
    expect(textOf(await fetchWith({ url: `${base}/binary` }))).toBe(`web_fetch: ${base}/binary is image/png (6 bytes), not a text page.`);
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(textOf(await fetchWith({ url: `http://127.0.0.1:${port}/` }))).toContain('ECONNREFUSED');
  });

  it('returns JSON as it is', async () => {
    expect(textOf(await fetchWith({ url: `${base}/json` }))).toBe(`${base}/json\n\n{"ok":true}`);
  });

  it('caps the bytes it reads', async () => {
    const text = textOf(await fetchWith({ url: `${base}/huge` }, { maxBytes: 2000, summarizeOver: 100_000 }));
    expect(text).toContain('[Page cut at 2000 bytes.]');
    expect(text.match(/x/g)).toHaveLength(2000);
  });

  it('gives up on a server that does not answer in time, and stops when aborted', async () => {
    expect(textOf(await fetchWith({ url: `${base}/slow` }, { timeoutMs: 300 }))).toBe(`web_fetch: ${base}/slow did not answer within 300 ms`);
    const trickle = await fetchWith({ url: `${base}/trickle` }, { timeoutMs: 300 });
    expect(trickle.isError).toBe(true);
    expect(textOf(trickle)).toBe(`web_fetch: ${base}/trickle did not finish sending the page within 300 ms`);
    const controller = new AbortController();
    const pending = fetchWith({ url: `${base}/slow` }, {}, controller.signal);
    setImmediate(() => controller.abort());
    await expect(pending).rejects.toThrow();
  });

  it('has the small model summarise a long page, guided by the prompt', async () => {
    const anthropic = await startAnthropicServer([say('Widgets have 400 paragraphs of settings.')]);
    const h = await harness([queryAnthropic(), queryService(), toolWeb()], { config: { baseURL: anthropic.url, smallModel: 'claude-small' } });
    try {
      const result = await h.run('web_fetch', { url: `${base}/long`, prompt: 'List the widget settings' });
      expect(textOf(result)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/long: summary of \d+ characters by the small model:\n\nWidgets have 400 paragraphs of settings\.$/);
      const body = anthropic.messageRequests()[0].body;
      expect(body.model).toBe('claude-small');
      expect(body.tools).toBeUndefined();
      const raw = body.messages[0].content as string | Array<{ text: string }>;
      const content = typeof raw === 'string' ? raw : raw.map((b) => b.text).join('');
      expect(content).toContain('Paragraph 399 about widgets');
      expect(content.endsWith('List the widget settings')).toBe(true);
    } finally {
      h.cleanup();
      await anthropic.close();
    }
  });

  it('uses the query service when a plugin offers it', async () => {
    const anthropic = await startAnthropicServer([say('summary via service')]);
    const h = await harness([queryAnthropic(), queryService(), toolWeb()], { config: { baseURL: anthropic.url, smallModel: 'claude-small' } });
    try {
      expect(textOf(await h.run('web_fetch', { url: `${base}/long`, prompt: 'p' }))).toContain('summary via service');
      expect(anthropic.messageRequests()[0].body.model).toBe('claude-small');
    } finally {
      h.cleanup();
      await anthropic.close();
    }
  });

  it('falls back to the cut page when the small model fails', async () => {
    const anthropic = await startAnthropicServer([{ status: 500, errorMessage: 'boom' }]);
    const h = await harness([queryAnthropic(), toolWeb({ summarizeOver: 500 })], { config: { baseURL: anthropic.url } });
    try {
      const result = await h.run('web_fetch', { url: `${base}/long`, prompt: 'p' });
      expect(textOf(result)).toMatch(/no small model was available to summarise it\.\]$/);
      expect(h.events.some((e) => e.type === 'log' && e.level === 'warn' && e.message.includes('the small model could not summarise'))).toBe(true);
    } finally {
      h.cleanup();
      await anthropic.close();
    }
  });

  it('cuts a long page with a notice when no model can summarise it', async () => {
    const text = textOf(await fetchWith({ url: `${base}/long` }, { summarizeOver: 500 }));
    expect(text).toMatch(/\[Page cut at 500 of \d+ characters; no small model was available to summarise it\.\]$/);
  });

  it('accepts only http(s) URLs', async () => {
    const h = await harness([toolWeb()]);
    try {
      const input = h.kernel.tools.get('web_fetch')!.input;
      for (const url of ['file:///etc/passwd', 'ftp://x/y', 'not a url']) {
        expect(input.safeParse({ url, prompt: 'p' }).error?.issues[0]).toMatchObject({ path: ['url'], message: 'must be an http:// or https:// URL' });
      }
      expect(h.kernel.tools.get('web_fetch')!.deferLoading).toBe(true);
    } finally {
      h.cleanup();
    }
  });
});
