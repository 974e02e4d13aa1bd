/**
 * What a page showing a piece of GitHub Markdown would fetch without a click: the Markdown rendered to HTML
 * (micromark with GitHub's extensions and raw HTML passed through, as GitHub's renderer does before its sanitiser),
 * then read by a real HTML parser (domino, a DOM implementation), every URL-loading attribute of every element.
 */
// @ts-expect-error domino ships no types; only createDocument is used.
import domino from '@mixmark-io/domino';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';

const LOADING = ['src', 'srcset', 'poster', 'background', 'lowsrc', 'dynsrc', 'data', 'imagesrcset'];

interface DomElement {
  tagName: string;
  attributes: ArrayLike<{ name: string; value: string }>;
  textContent: string | null;
}

export function renderedHtml(markdown: string): string {
  return micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
}

/** Each URL the rendered page loads by itself, as `tag attribute=value` (srcset values whole). */
export function renderedLoads(markdown: string): string[] {
  const document = (domino as { createDocument(html: string): { querySelectorAll(s: string): ArrayLike<DomElement> } }).createDocument(renderedHtml(markdown));
  const loads: string[] = [];
  for (const element of Array.from(document.querySelectorAll('*'))) {
    const tag = element.tagName.toLowerCase();
    for (const { name, value } of Array.from(element.attributes)) {
      const attr = name.toLowerCase();
      if (LOADING.includes(attr) || (attr.endsWith('href') && tag !== 'a' && tag !== 'area') || (attr === 'style' && /url/i.test(value))) loads.push(`${tag} ${attr}=${value}`);
    }
    if (tag === 'style') loads.push(`style ${element.textContent ?? ''}`);
  }
  return loads;
}
