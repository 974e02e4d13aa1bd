import { z } from 'zod';
import { definePlugin, defineTool, errorMessage, responseText, type MessageParam, type QueryResponse, type TextBlockParam, type ToolContext, type ToolResult } from '../../kernel/index.js';
import { FetchError, fetchPage, isHttpUrl, type FetchLimits } from './fetch-page.js';
import { pageText } from './to-text.js';

export interface ToolWebOptions {
  /** Bytes read from a response at most. Default 5 MB. */
  maxBytes?: number;
  /** Redirects followed on the same host at most. Default 5. */
  maxRedirects?: number;
  /** Default 30 s. */
  timeoutMs?: number;
  /** Pages longer than this many characters (after conversion) are summarised by the small model. Default 12 000. */
  summarizeOver?: number;
}

/** Characters of a large page handed to the small model at most. */
const SUMMARY_INPUT = 100_000;

const input = z.object({
  url: z.string().refine(isHttpUrl, { message: 'must be an http:// or https:// URL' }).describe('http(s) URL'),
  prompt: z.string().min(1).describe('What you want from the page; guides the summary of long pages'),
});

const SUMMARY_SYSTEM =
  'You extract information from a web page for a coding agent. Answer the request using only the page content, concisely; quote code, commands, versions and API signatures exactly. Say so if the page does not contain the answer.';

/** web_fetch: read a web page as markdown; long pages come back summarised by the small model. Deferred. */
export default definePlugin((opts: ToolWebOptions = {}) => ({
  name: 'tool-web',
  kernel: '^1.0.0',
  apply(kernel) {
    const limits: FetchLimits = { maxBytes: opts.maxBytes ?? 5 * 1024 * 1024, maxRedirects: opts.maxRedirects ?? 5, timeoutMs: opts.timeoutMs ?? 30_000 };
    const summarizeOver = opts.summarizeOver ?? 12_000;
    kernel.tools.register(
      defineTool({
        name: 'web_fetch',
        description:
          'Fetch an http(s) URL and read it as markdown (HTML is converted). Long pages are summarised by a small model guided by prompt, so say exactly what you need. Redirects to another host are reported, not followed: fetch the new URL yourself. Read-only.',
        permission: 'network',
        input,
        deferLoading: true,
        async execute(args, ctx): Promise<ToolResult> {
          let outcome;
          try {
            // Through the `network` service's proxy when one is set; the client certificate is never presented to pages.
            const network = await kernel.services.get('network')?.load();
            outcome = await fetchPage(args.url, limits, ctx.signal, network ? (input, init) => network.fetch(input, init) : undefined);
          } catch (err) {
            if (err instanceof FetchError) return { content: `web_fetch: ${err.message}`, isError: true };
            throw err;
          }
          if (outcome.kind === 'cross-host') {
            return { content: `${outcome.from} redirects (${outcome.status}) to another host: ${outcome.to}\nTo read it, call web_fetch again with that URL.` };
          }
          if (outcome.status >= 400) {
            return { content: `web_fetch: ${outcome.url} answered ${outcome.status} ${outcome.statusText}.`, isError: true, display: { status: outcome.status } };
          }
          const page = await pageText(outcome.body, outcome.contentType);
          if (page.kind === 'binary') return { content: `web_fetch: ${outcome.url} is ${page.type} (${outcome.body.length} bytes), not a text page.`, isError: true };
          const capped = outcome.truncated ? `\n\n[Page cut at ${limits.maxBytes} bytes.]` : '';
          const head = `${outcome.url}${outcome.url !== args.url ? ` (redirected from ${args.url})` : ''}`;
          if (page.text.length <= summarizeOver) return { content: `${head}\n\n${page.text}${capped}`, display: { url: outcome.url, chars: page.text.length } };
          const summary = await summarize(page.text, args.prompt, outcome.url, ctx);
          if (summary) {
            return { content: `${head}: summary of ${page.text.length} characters by the small model:\n\n${summary}${capped}`, display: { url: outcome.url, chars: page.text.length, summarized: true } };
          }
          return {
            content: `${head}\n\n${page.text.slice(0, summarizeOver)}\n\n[Page cut at ${summarizeOver} of ${page.text.length} characters; no small model was available to summarise it.]`,
            display: { url: outcome.url, chars: page.text.length },
          };
        },
      }),
    );
  },
}));

/** Asks the small model about a long page (the `query` service); undefined when no model answers or none is offered. */
async function summarize(markdown: string, prompt: string, url: string, ctx: ToolContext): Promise<string | undefined> {
  const system: TextBlockParam[] = [{ type: 'text', text: SUMMARY_SYSTEM }];
  const page = markdown.length > SUMMARY_INPUT ? `${markdown.slice(0, SUMMARY_INPUT)}\n[page cut here]` : markdown;
  const messages: MessageParam[] = [{ role: 'user', content: `<page url="${url}">\n${page}\n</page>\n\n${prompt}` }];
  const { kernel, turn } = ctx;
  let response: QueryResponse;
  try {
    response = await kernel.services.require('query', 'tool-web').ask({ tier: 'small', system, messages, maxTokens: 2048, signal: ctx.signal }, turn);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    kernel.log('warn', `web_fetch: the small model could not summarise ${url}: ${errorMessage(err)}`, 'tool-web');
    return undefined;
  }
  const text = responseText(response.content).trim();
  return text || undefined;
}
