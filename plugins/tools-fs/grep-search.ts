/** What both grep backends (ripgrep and the JavaScript fallback) take and return, so results can be compared. */
export interface GrepQuery {
  pattern: string;
  /** Absolute file or folder. */
  target: string;
  /** Folder whose ignore rules apply at the top (git root or project root). */
  ignoreRoot: string;
  glob?: string;
  ignoreCase: boolean;
  multiline: boolean;
  /** Lines of context around each match (content mode only). */
  context: number;
  /** Only whether a file matches is wanted (files_with_matches): backends may stop at the first match. */
  filesOnly: boolean;
  /** Folder entries the JavaScript walk visits at most (default MAX_WALK_ENTRIES); ripgrep walks on its own. */
  walkLimit?: number;
}

export interface GrepLine {
  n: number;
  text: string;
  match: boolean;
}

export interface GrepFile {
  abs: string;
  /** Matched lines and their context, in line order. */
  lines: GrepLine[];
}

export interface GrepOutcome {
  files: GrepFile[];
  /** Set when a backend stopped early because it collected too much. */
  truncated?: boolean;
  /** Set when the walk stopped at its entry cap, so files may be missing. */
  walkCapped?: boolean;
}

/** Lines either backend collects at most before it stops (keeps memory bounded on huge trees). */
export const COLLECT_LIMIT = 20_000;

/** Files larger than this are skipped in a folder search by both backends (ripgrep's --max-filesize). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;

export class GrepError extends Error {}

/** Adds lines to a file's result, merging by line number (a match wins over context). */
export function addLines(into: Map<number, GrepLine>, lines: GrepLine[]): void {
  for (const line of lines) {
    const have = into.get(line.n);
    if (!have || (line.match && !have.match)) into.set(line.n, line);
  }
}

export function sortedLines(map: Map<number, GrepLine>): GrepLine[] {
  return [...map.values()].sort((a, b) => a.n - b.n);
}
