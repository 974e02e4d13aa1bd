/**
 * Neutralises every image in a piece of Markdown whose URL the policy does not allow, before GitHub renders it (see
 * image-policy.ts for why). The text is parsed as GitHub parses it (CommonMark with GitHub's extensions, by
 * micromark, which passes the CommonMark spec's tests) and, to cover any corner where a parser could differ, also as
 * plain CommonMark; what either parse renders as an image is judged:
 *
 * - Markdown images, inline or by reference (`![a](url)`, `![a][ref]`, `![ref]`, URLs written with character
 *   references, escapes or `<…>`) are replaced by text naming the URL in a code span;
 * - raw HTML that loads a URL without a click (`<img>`, `<picture><source srcset>`, `<video poster>`, SVG, inline
 *   styles, …) has its `<` written as `&lt;`, so the markup shows as text;
 * - diagram blocks GitHub renders in its viewer (mermaid, geojson, topojson, stl) that mention a URL or an image
 *   become plain code blocks.
 *
 * The result is parsed again until nothing is left to change (a rewrite can turn text into markup: an `alt` that
 * held image syntax); should that not settle, every `<` and `![` is escaped, which leaves no image at all.
 */
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';
import { LOADING_ELEMENTS, loadedUrls, tagAt, tagUrls } from './html-urls.js';
import type { ImagePolicy } from './image-policy.js';

/** The parts of an mdast node read here (mdast-util-from-markdown's output). */
interface MdNode {
  type: string;
  children?: MdNode[];
  position?: { start: { offset?: number }; end: { offset?: number } };
  url?: string;
  identifier?: string;
  value?: string;
  lang?: string | null;
}

interface Edit {
  start: number;
  end: number;
  text: string;
  /** A whole raw HTML node escaped: waits while finer `&lt;` edits are pending. */
  wholeHtml?: boolean;
}

const DIAGRAMS = new Set(['mermaid', 'geojson', 'topojson', 'stl']);
const MAX_ROUNDS = 8;
/**
 * Beyond these the text is not parsed but escaped whole (no `<` and no `![` left): reading unclosed tags is
 * quadratic, and a crafted answer of a few thousand `<a x ` would otherwise hold the job for many minutes.
 */
const MAX_PARSED_CHARS = 100_000;
const MAX_PARSED_TAGS = 200;

/** The URL as text no Markdown reads as markup: in a code span, with what could end or split the span encoded. */
export function shownUrl(url: string): string {
  const safe = url.replace(/[`|<>\s]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return `(image not shown, its URL is not on the allow list: \`${safe || '(empty)'}\`)`;
}

/** A reference label compared loosely: compatibility forms, case and everything but letters and digits ignored. */
function looseLabel(label: string): string {
  return label.normalize('NFKD').toLowerCase().toUpperCase().toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

function walk(node: MdNode, visit: (node: MdNode) => void): void {
  visit(node);
  for (const child of node.children ?? []) walk(child, visit);
}

function span(node: MdNode): { start: number; end: number } | undefined {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  return start === undefined || end === undefined ? undefined : { start, end };
}

/** The edits one parse calls for. */
function editsOf(text: string, tree: MdNode, allows: ImagePolicy): Edit[] {
  const definitions = new Map<string, string>();
  const loosely = new Map<string, string[]>();
  walk(tree, (node) => {
    if (node.type !== 'definition' || node.identifier === undefined) return;
    if (!definitions.has(node.identifier)) definitions.set(node.identifier, node.url ?? '');
    const key = looseLabel(node.identifier);
    loosely.set(key, [...(loosely.get(key) ?? []), node.url ?? '']);
  });
  // A renderer that folds labels otherwise (Unicode case folding) could pick another definition of a like label.
  // So a reference renders only when every definition of a like label is allowed; else the off-list URL is shown.
  const referenced = (identifier: string): string | undefined => (loosely.get(looseLabel(identifier)) ?? []).find((url) => !allows(url)) ?? definitions.get(identifier);
  const edits: Edit[] = [];
  walk(tree, (node) => {
    const at = span(node);
    if (!at) return;
    if (node.type === 'image' || node.type === 'imageReference') {
      const url = node.type === 'image' ? node.url : referenced(node.identifier ?? '');
      if (url === undefined || !allows(url)) edits.push({ ...at, text: shownUrl(url ?? '') });
    } else if (node.type === 'html') {
      const urls = loadedUrls(node.value ?? '');
      if (!urls || !urls.every(allows)) edits.push({ ...at, text: text.slice(at.start, at.end).replace(/</g, '&lt;'), wholeHtml: true });
    } else if (node.type === 'code' && node.lang && DIAGRAMS.has(node.lang.toLowerCase()) && /\/\/|url|img|image|href|src|http|\\|&|%%\{|init|css/i.test(node.value ?? '')) {
      const source = text.slice(at.start, at.end);
      edits.push({ ...at, text: source.replace(/^(\s*(?:`{3,}|~{3,})\s*)\S+/, '$1text') });
    }
  });
  return edits;
}

/** Applies edits, the earliest first; one that overlaps an earlier one waits for the next round. */
function apply(text: string, edits: Edit[]): string {
  const chosen: Edit[] = [];
  for (const edit of edits.sort((a, b) => a.start - b.start || b.end - a.end)) {
    const last = chosen[chosen.length - 1];
    if (last && edit.start < last.end) continue;
    chosen.push(edit);
  }
  let out = '';
  let at = 0;
  for (const edit of chosen) {
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + text.slice(at);
}

function parses(text: string): MdNode[] {
  return [fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }) as MdNode, fromMarkdown(text) as MdNode];
}

/** The spans both parses read as code (where nothing renders): only there is raw text left alone. */
function codeSpans(trees: MdNode[]): (at: number) => boolean {
  const spans = trees.map((tree) => {
    const found: Array<{ start: number; end: number }> = [];
    walk(tree, (node) => {
      const at = span(node);
      if (at && (node.type === 'code' || node.type === 'inlineCode')) found.push(at);
    });
    return found;
  });
  return (at) => spans.every((list) => list.some((s) => at >= s.start && at < s.end));
}

/** Attributes that load a URL, as words: how a tag over several lines is judged. */
const LOADING_WORDS = /[\s/"'](?:src|srcset|imagesrcset|poster|background|lowsrc|dynsrc|data|style|xlink:href|href)\s*=/i;

/**
 * The parser-independent pass, for where another Markdown parser (GitHub's cmark-gfm) could read raw HTML or an image
 * that micromark does not (micromark ends an unquoted attribute value at `/`, cmark does not): every `<` outside code
 * that opens a tag loading an off-list URL becomes `&lt;`, and every `![` no parse read as an image gets its `!`
 * escaped (at worst a link then, which needs a click).
 */
function rawEdits(text: string, trees: MdNode[], allows: ImagePolicy): Edit[] {
  const inCode = codeSpans(trees);
  const imageStarts = new Set<number>();
  for (const tree of trees) {
    walk(tree, (node) => {
      const at = span(node);
      if (at && (node.type === 'image' || node.type === 'imageReference')) imageStarts.add(at.start);
    });
  }
  // In a table cell GitHub unescapes `\|` before reading the HTML: both readings must be allowed.
  const allowed = (url: string) => allows(url) && allows(url.replace(/\\\|/g, '|'));
  const edits: Edit[] = [];
  for (const match of text.matchAll(/<[A-Za-z]/g)) {
    const at = match.index;
    if (inCode(at)) continue;
    const tag = tagAt(text, at);
    const urls = tagUrls(tag);
    let loads: boolean;
    if (!tag.closed || text.slice(at, tag.end).includes('\n')) {
      // Over lines, a container's `>` (a block quote) may sit inside the tag for Markdown and not for HTML: judge the
      // tag by its words, up to the paragraph's end.
      const blank = text.slice(at).search(/\n[ \t]*\n/);
      const rest = text.slice(at, blank < 0 ? text.length : at + blank);
      loads = LOADING_ELEMENTS.has(tag.name) || LOADING_WORDS.test(rest) || !urls;
    } else {
      loads = !urls || !urls.every(allowed) || (LOADING_ELEMENTS.has(tag.name) && urls.length === 0);
    }
    if (loads) edits.push({ start: at, end: at + 1, text: '&lt;' });
  }
  for (const match of text.matchAll(/!\[/g)) {
    const at = match.index;
    if (inCode(at) || imageStarts.has(at)) continue;
    let slashes = 0;
    while (text[at - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 0) edits.push({ start: at, end: at, text: '\\' });
  }
  return edits;
}

/** What a renderer could load from the text, as (possibly duplicate) edits; empty when nothing is off the list. */
export function offListImages(text: string, allows: ImagePolicy): Edit[] {
  const trees = parses(text);
  const raw = rawEdits(text, trees, allows);
  const markdown = trees.flatMap((tree) => editsOf(text, tree, allows));
  // The fine-grained `&lt;` edits first: a whole HTML node is escaped only once they leave it off-list.
  return raw.length ? [...raw, ...markdown.filter((edit) => !edit.wholeHtml)] : markdown;
}

/** Every image needs `![`, a tag, or a diagram block: text without any is posted as it is, unparsed. */
const MAY_LOAD = /!\[|<[A-Za-z]|(?:`{3,}|~{3,})\s*(?:mermaid|geojson|topojson|stl)/i;

/** No `<` and no `![` leave no image at all. */
const escapeAll = (text: string) => text.replace(/</g, '&lt;').replace(/!\[/g, '!\\[');

export function neutraliseImages(text: string, allows: ImagePolicy, rounds = MAX_ROUNDS): string {
  if (!MAY_LOAD.test(text)) return text;
  if (text.length > MAX_PARSED_CHARS || (text.match(/<[A-Za-z]/g)?.length ?? 0) > MAX_PARSED_TAGS) return escapeAll(text);
  let out = text;
  try {
    for (let round = 0; round < rounds; round++) {
      const edits = offListImages(out, allows);
      if (!edits.length) return out;
      out = apply(out, edits);
    }
    if (!offListImages(out, allows).length) return out;
  } catch {
    // A text the parser or the policy cannot read is never posted as it is.
  }
  // Also for markup built to regrow after every rewrite (never seen in practice).
  return escapeAll(out);
}
