export interface TruncateOptions {
  /** Outputs with more lines than this are cut. */
  maxLines: number;
  /** Outputs with more characters than this are cut. */
  maxChars: number;
  headLines: number;
  tailLines: number;
}

export interface Cut {
  head: string;
  tail: string;
  omittedLines: number;
  omittedChars: number;
  /** 1-based line numbers of the first and last line (partly) left out. */
  fromLine: number;
  toLine: number;
  totalLines: number;
}

function countNewlines(text: string, from = 0, to = text.length): number {
  let n = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Offset just after the first `lines` lines. */
function afterLines(text: string, lines: number): number {
  let at = 0;
  for (let i = 0; i < lines; i++) {
    const nl = text.indexOf('\n', at);
    if (nl === -1) return text.length;
    at = nl + 1;
  }
  return at;
}

/** Offset where the last `lines` lines begin. */
function beforeLastLines(text: string, lines: number): number {
  let at = text.endsWith('\n') ? text.length - 1 : text.length;
  for (let i = 0; i < lines; i++) {
    const nl = text.lastIndexOf('\n', at - 1);
    if (nl === -1) return 0;
    at = nl;
  }
  return at === 0 ? 0 : at + 1;
}

/** Head and tail of an output that is over a threshold, or null when it fits. */
export function cutOutput(text: string, opts: TruncateOptions): Cut | null {
  const totalLines = countNewlines(text) + (text.endsWith('\n') || text.length === 0 ? 0 : 1);
  if (totalLines <= opts.maxLines && text.length <= opts.maxChars) return null;
  const half = Math.floor(opts.maxChars / 2);
  let headEnd = Math.min(afterLines(text, opts.headLines), half);
  let tailStart = Math.max(beforeLastLines(text, opts.tailLines), text.length - half);
  if (tailStart <= headEnd) {
    // Few but long lines: cut by characters around the middle.
    headEnd = Math.min(half, Math.floor(text.length / 2));
    tailStart = Math.max(text.length - half, headEnd);
  }
  if (tailStart <= headEnd) return null;
  return {
    head: text.slice(0, headEnd),
    tail: text.slice(tailStart),
    omittedLines: countNewlines(text, headEnd, tailStart),
    omittedChars: tailStart - headEnd,
    fromLine: countNewlines(text, 0, headEnd) + 1,
    toLine: countNewlines(text, 0, tailStart) + 1,
    totalLines,
  };
}
