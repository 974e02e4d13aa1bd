/**
 * Syntax colours for one line of a fenced code block: comments, strings, numbers and the keywords of the
 * common languages. Line by line, so a streamed block is coloured as each line completes; a construct that
 * spans lines (a block comment) is tracked by the caller's `state`.
 */
import type { Paint } from './style.js';

const KEYWORDS = new Set(
  (
    'abstract as async await break case catch class const continue def default defer del do elif else enum export extends ' +
    'false fi finally fn for from func function go if impl implements import in interface is lambda let match mod module mut ' +
    'new nil none not null of or and package pass private protected pub public raise return self static struct super switch ' +
    'then this throw trait true try type typeof undefined use var void where while with yield echo local done esac'
  ).split(' '),
);

/** Which languages use `#` for line comments. */
const HASH_COMMENTS = /^(py|python|sh|bash|zsh|shell|rb|ruby|yaml|yml|toml|perl|r|make|makefile|dockerfile|conf|ini)$/i;

export interface HighlightState {
  inBlockComment: boolean;
}

const TOKEN = /(\/\/.*$|#.*$|\/\*|\*\/|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`|\b\d[\d_.xXa-fA-F]*\b|[A-Za-z_$][\w$]*)/g;

export function highlightLine(line: string, lang: string, state: HighlightState, paint: Paint): string {
  if (paint.level === 0) return line;
  const hash = HASH_COMMENTS.test(lang);
  let out = '';
  let last = 0;
  for (const match of line.matchAll(TOKEN)) {
    const token = match[0];
    const at = match.index ?? 0;
    const before = line.slice(last, at);
    if (state.inBlockComment) {
      if (token === '*/') {
        state.inBlockComment = false;
        out += paint.gray(before + token);
        last = at + token.length;
      }
      continue;
    }
    out += before;
    last = at + token.length;
    if (token === '/*') {
      state.inBlockComment = true;
      out += paint.gray(token);
    } else if (token.startsWith('//') && !hash) out += paint.gray(token);
    else if (token.startsWith('#') && hash) out += paint.gray(token);
    else if (token.startsWith('#') || token.startsWith('//')) {
      // not a comment in this language: colour what follows as ordinary code
      out += token.slice(0, 1);
      out += highlightLine(token.slice(1), lang, state, paint);
    } else if (/^["'`]/.test(token)) out += paint.green(token);
    else if (/^\d/.test(token)) out += paint.yellow(token);
    else if (KEYWORDS.has(token)) out += paint.magenta(token);
    else out += token;
  }
  const rest = line.slice(last);
  out += state.inBlockComment ? paint.gray(rest) : rest;
  return out;
}
