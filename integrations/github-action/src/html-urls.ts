/**
 * The URLs raw HTML makes a browser fetch without a click (`<img src>`, `<picture><source srcset>`, `<video poster>`,
 * …), read as a browser's HTML tokenizer reads tags: attribute names in any case, values quoted or not, character
 * references decoded. A tag the reader cannot vouch for counts as loading something unknown (`undefined`), never as
 * loading nothing.
 */
import { decodeNamedCharacterReference } from 'decode-named-character-reference';

/** Attributes whose URL loads by itself on any element. */
const LOADING = new Set(['src', 'srcset', 'imagesrcset', 'poster', 'background', 'lowsrc', 'dynsrc', 'data', 'xlink:href', 'codebase', 'archive', 'manifest', 'icon']);
/** Elements whose `href` needs a click; on every other element (`<link>`, SVG `<image>`/`<use>`) it loads. */
const CLICKED_HREF = new Set(['a', 'area']);
/** Elements that load by what they hold rather than by an attribute: never vouched for. */
const OPAQUE = new Set(['style', 'meta', 'base', 'svg', 'math']);
/** Elements that exist to load something: one whose URL this reader cannot find is not vouched for. */
export const LOADING_ELEMENTS = new Set(['img', 'image', 'source', 'track', 'iframe', 'frame', 'embed', 'object', 'link', 'use', 'feimage', 'script', ...OPAQUE]);

/** A character reference as a browser decodes it in an attribute value (also without the `;` where it may). */
export function decodeCharacterReferences(value: string): string {
  return value.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*);?/g, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\uFFFD';
    }
    const decoded = decodeNamedCharacterReference(ref);
    if (decoded !== false && (whole.endsWith(';') || /^(amp|lt|gt|quot|AMP|LT|GT|QUOT)$/.test(ref))) return decoded;
    return whole;
  });
}

/** The URLs of a `srcset` value (HTML's candidate list: a URL, then descriptors up to a comma outside parentheses). */
export function srcsetUrls(value: string): string[] {
  const urls: string[] = [];
  let at = 0;
  while (at < value.length) {
    while (at < value.length && /[\s,]/.test(value[at]!)) at++;
    if (at >= value.length) break;
    let end = at;
    while (end < value.length && !/\s/.test(value[end]!)) end++;
    let url = value.slice(at, end);
    at = end;
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
    } else {
      let depth = 0;
      while (at < value.length && (value[at] !== ',' || depth > 0)) {
        if (value[at] === '(') depth++;
        else if (value[at] === ')') depth = Math.max(0, depth - 1);
        at++;
      }
    }
    if (url) urls.push(url);
  }
  return urls;
}

export interface Tag {
  name: string;
  attributes: Array<[name: string, value: string]>;
  /** Where the tag's text ends (after its `>`, or the end of the input when it has none). */
  end: number;
  closed: boolean;
}

/** The start tag whose `<` is at `start` (the caller checked `<` and a letter there). */
export function tagAt(html: string, start: number): Tag {
  const nameMatch = /^<([A-Za-z][^\s/>\0]*)/.exec(html.slice(start, start + 256))!;
  const tag: Tag = { name: nameMatch[1]!.toLowerCase(), attributes: [], end: html.length, closed: false };
  let at = start + nameMatch[0].length;
  for (;;) {
    while (at < html.length && /[\s/]/.test(html[at]!)) at++;
    if (at >= html.length) break;
    if (html[at] === '>') {
      tag.end = at + 1;
      tag.closed = true;
      break;
    }
    const nameStart = at;
    at++; // a leading `=` belongs to the name
    while (at < html.length && !/[\s/>=]/.test(html[at]!)) at++;
    const name = html.slice(nameStart, at).toLowerCase();
    while (at < html.length && /\s/.test(html[at]!)) at++;
    let value = '';
    if (html[at] === '=') {
      at++;
      while (at < html.length && /\s/.test(html[at]!)) at++;
      const quote = html[at];
      if (quote === '"' || quote === "'") {
        const close = html.indexOf(quote, at + 1);
        value = html.slice(at + 1, close < 0 ? html.length : close);
        at = close < 0 ? html.length : close + 1;
      } else {
        const valueStart = at;
        while (at < html.length && !/[\s>]/.test(html[at]!)) at++;
        value = html.slice(valueStart, at);
      }
    }
    tag.attributes.push([name, decodeCharacterReferences(value)]);
  }
  return tag;
}

/** Every start tag in a piece of raw HTML, each `<` read as a tag of its own (also inside comments and values). */
export function startTags(html: string): Tag[] {
  const tags: Tag[] = [];
  for (const match of html.matchAll(/<[A-Za-z]/g)) tags.push(tagAt(html, match.index));
  return tags;
}

/**
 * The URLs the HTML loads without a click, or `undefined` when it may load something this reader cannot name (a
 * `<style>` sheet, an inline `style` with `url(` or escapes, `<meta>`/`<base>`, SVG and MathML, a reference left
 * undecoded): the caller treats that as off the allow list.
 */
export function loadedUrls(html: string): string[] | undefined {
  const urls: string[] = [];
  for (const tag of startTags(html)) {
    const loaded = tagUrls(tag);
    if (!loaded) return undefined;
    urls.push(...loaded);
  }
  return urls;
}

/** The URLs one tag loads without a click, or `undefined` when it may load something unnamed (see loadedUrls). */
export function tagUrls(tag: Tag): string[] | undefined {
  if (OPAQUE.has(tag.name)) return undefined;
  const urls: string[] = [];
  for (const [name, value] of tag.attributes) {
    // srcdoc holds a whole page; an event handler runs script: neither is a URL this reader can judge.
    if (name === 'srcdoc' || /^on[a-z]/.test(name)) return undefined;
    if (name === 'style') {
      if (/url|image|\\|@import|expression/i.test(value)) return undefined;
      continue;
    }
    const loads = LOADING.has(name) || (name === 'href' && !CLICKED_HREF.has(tag.name)) || name.endsWith(':href');
    if (!loads) continue;
    if (/&(#|[A-Za-z][A-Za-z0-9]*;)/.test(value)) return undefined; // a reference the decoder did not know
    if (name === 'srcset' || name === 'imagesrcset') urls.push(...srcsetUrls(value));
    else if (name === 'archive') urls.push(...value.split(/[\s,]+/).filter(Boolean));
    else urls.push(value);
  }
  return urls;
}
