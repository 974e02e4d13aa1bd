/**
 * Text from GitHub (comments, issue and PR bodies) before it reaches the prompt: what a reader of the rendered
 * page does not see is removed, so nobody can hide instructions for the agent in it.
 */

/** Zero-width and invisible formatting characters (and the bidi controls used to reorder text). */
const INVISIBLE = /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\u{E0000}-\u{E007F}]/gu;

export function sanitize(text: string): string {
  let out = text.replace(/\r\n?/g, '\n');
  // HTML comments, also unterminated ones (GitHub hides everything after `<!--`).
  out = out.replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  // <details>: the folded part is hidden until clicked; keep its summary line only.
  out = out.replace(/<details\b[^>]*>([\s\S]*?)<\/details\s*>/gi, (_m, inner: string) => {
    const summary = /<summary\b[^>]*>([\s\S]*?)<\/summary\s*>/i.exec(inner);
    return summary ? summary[1]!.trim() : '';
  });
  out = out.replace(/<details\b[^>]*>[\s\S]*$/gi, '');
  // Elements a page does not show as text, with their content.
  out = out.replace(/<(script|style|template|noscript|textarea|iframe|object)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '');
  // Elements hidden by attribute or inline style, with their content.
  out = out.replace(/<([a-z][\w-]*)\b[^>]*\b(?:hidden|aria-hidden\s*=\s*["']?true|style\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0)[^"']*["'])[^>]*>[\s\S]*?<\/\1\s*>/gi, '');
  // Image alt text and link titles are not read as the text around them.
  out = out.replace(/!\[[^\]]*\]\(([^)\s]*)[^)]*\)/g, '![image]($1)');
  out = out.replace(/\[([^\]]*)\]\(([^)\s]*)\s+"[^"]*"\)/g, '[$1]($2)');
  // Markdown reference definitions (`[x]: <url> "title"`) render as nothing.
  out = out.replace(/^ {0,3}\[[^\]]+\]:\s*\S+.*$/gm, '');
  // Every remaining tag goes; its text stays.
  out = out.replace(/<\/?[a-z][\w-]*\b[^>]*>/gi, '');
  out = out.replace(/&#x?[0-9a-f]+;/gi, (entity) => {
    const code = entity[2] === 'x' || entity[2] === 'X' ? parseInt(entity.slice(3, -1), 16) : parseInt(entity.slice(2, -1), 10);
    const char = Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
    return char.replace(INVISIBLE, '');
  });
  out = out.replace(INVISIBLE, '');
  return out.replace(/\n{3,}/g, '\n\n').trim();
}

/**
 * Code from GitHub (a pull request's diff, a review comment's hunk and file name) is kept as it is, since markup in
 * code is code; but each invisible character is shown as `<U+XXXX>`, so nothing in it is read by the agent that a
 * reviewer of the page cannot see (tag characters spelling an instruction, bidi overrides).
 */
export function reveal(text: string): string {
  return text.replace(INVISIBLE, (ch) => `<U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`);
}
