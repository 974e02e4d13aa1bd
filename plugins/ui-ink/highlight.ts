/**
 * Syntax colours for fenced code blocks, by highlight.js grammars (through `emphasize`, which turns its
 * tokens into ANSI styles). Only a common set of languages is registered, to keep the UI chunk small; other
 * blocks stay uncoloured. A block is streamed line by line: each new line is coloured with the block so far
 * as its context, so strings and comments that span lines keep their colour.
 */
import { createEmphasize, type Sheet } from 'emphasize';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import type { Paint } from './style.js';

const emphasize = createEmphasize({ bash, c, cpp, css, diff, dockerfile, go, ini, java, javascript, json, makefile, markdown, python, ruby, rust, shell, sql, typescript, xml, yaml });
// Fence names highlight.js does not know as aliases.
emphasize.registerAlias({ typescript: ['tsx', 'mts', 'cts'], javascript: ['jsx', 'mjs', 'cjs'], json: ['jsonc', 'json5'], bash: ['console'] });

/** The registered language a fence names, if any. */
export function languageOf(fence: string): string | undefined {
  const name = fence.trim().toLowerCase();
  return name && emphasize.registered(name) ? name : undefined;
}

const sheets = new WeakMap<Paint, Sheet>();

/** highlight.js classes to this run's colours (its chalk level: none under NO_COLOR). */
function sheetFor(p: Paint): Sheet {
  let sheet = sheets.get(p);
  if (sheet) return sheet;
  sheet = {
    comment: p.gray,
    quote: p.gray,
    keyword: p.magenta,
    'selector-tag': p.magenta,
    'meta keyword': p.magenta,
    literal: p.yellow,
    number: p.yellow,
    string: p.green,
    regexp: p.green,
    'meta meta-string': p.green,
    addition: p.green,
    deletion: p.red,
    title: p.blue,
    section: p.blue.bold,
    'title function_': p.blue,
    'class title': p.yellow,
    type: p.yellow,
    built_in: p.cyan,
    attr: p.cyan,
    attribute: p.cyan,
    variable: p.red,
    'template-variable': p.red,
    symbol: p.cyan,
    bullet: p.cyan,
    meta: p.gray,
    subst: (s: string) => s,
    link: p.underline,
    emphasis: p.italic,
    strong: p.bold,
  };
  sheets.set(p, sheet);
  return sheet;
}

/** Lines of context kept before the line being coloured: enough for any comment or string, bounded cost. */
const CONTEXT_LINES = 200;

/** One fenced block being streamed: `line()` colours each finished line, `preview()` the line in progress. */
export class CodeHighlighter {
  private readonly lines: string[] = [];
  private readonly language: string | undefined;

  constructor(
    fence: string,
    private readonly paint: Paint,
  ) {
    this.language = paint.level > 0 ? languageOf(fence) : undefined;
  }

  /** A finished line of the block, coloured. */
  line(text: string): string {
    const out = this.colour(text);
    this.lines.push(text);
    if (this.lines.length > CONTEXT_LINES) this.lines.shift();
    return out;
  }

  /** The unfinished last line, coloured as it stands (nothing is remembered). */
  preview(text: string): string {
    return this.colour(text);
  }

  private colour(text: string): string {
    if (!this.language) return text;
    const code = this.lines.length > 0 ? `${this.lines.join('\n')}\n${text}` : text;
    try {
      const value = emphasize.highlight(this.language, code, sheetFor(this.paint)).value;
      return value.slice(value.lastIndexOf('\n') + 1);
    } catch {
      return text;
    }
  }
}
