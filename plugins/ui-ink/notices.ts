/**
 * Events other plugins publish, read by shape (the UI imports no plugin): a web search (`web_search`, from
 * tool-web-search) and a change of permission mode (`permission_mode`, from plan-mode), as one line each.
 */
import type { AgentEvent } from '../../kernel/index.js';
import type { Glyphs } from './glyphs.js';
import type { Paint } from './style.js';

export interface WebSearch {
  query: string;
  results: Array<{ title: string; url: string }>;
  citations: Array<{ url: string }>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** A `web_search` event's fields, or null for any other event. */
export function webSearchOf(event: AgentEvent): WebSearch | null {
  const e: Record<string, unknown> = event;
  if (e.type !== 'web_search' || typeof e.query !== 'string') return null;
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is { title: string; url: string } => isRecord(x) && typeof x.url === 'string') : []);
  return { query: e.query, results: list(e.results), citations: list(e.citations) };
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** `● Web search "node 22 v8" · 8 results · 2 cited (nodejs.org, v8.dev)` */
export function webSearchLine(search: WebSearch, glyphs: Glyphs, paint: Paint): string {
  const urls = new Set(search.results.map((r) => r.url));
  const cited = [...new Set(search.citations.map((c) => c.url).filter((u) => urls.has(u)))];
  const hosts = [...new Set(cited.map(host))];
  const parts = [plural(search.results.length, 'result'), ...(cited.length > 0 ? [`${cited.length} cited (${hosts.join(', ')})`] : [])];
  return `${paint.green(glyphs.bullet)} ${paint.bold('Web search')} ${JSON.stringify(search.query)} ${paint.dim(`${glyphs.dot} ${parts.join(` ${glyphs.dot} `)}`)}`;
}

function host(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return url;
  }
}

/** A `permission_mode` event as a line, or null for any other event. */
export function modeChangeLine(event: AgentEvent, glyphs: Glyphs, paint: Paint): string | null {
  const e: Record<string, unknown> = event;
  if (e.type !== 'permission_mode' || typeof e.to !== 'string') return null;
  const why = typeof e.reason === 'string' && e.reason ? ` (${e.reason})` : '';
  return paint.dim(`${glyphs.dot} Permission mode: ${e.to}${why}`);
}
