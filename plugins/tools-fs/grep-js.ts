import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { IgnoreRules } from './ignore-rules.js';
import { COLLECT_LIMIT, GrepError, MAX_FILE_BYTES, addLines, sortedLines, type GrepFile, type GrepLine, type GrepOutcome, type GrepQuery } from './grep-search.js';
import { decode, isBinary } from './text.js';
import { walkBudget, walkFiles } from './walk.js';

/** Files searched between yields to the event loop (each a synchronous stat and read). */
const YIELD_EVERY = 32;

/** The JavaScript grep: the same walk, ignore rules, and line semantics as ripgrep's defaults. */
export async function searchJs(query: GrepQuery, signal?: AbortSignal): Promise<GrepOutcome> {
  let regex: RegExp;
  try {
    regex = new RegExp(query.pattern, `g${query.ignoreCase ? 'i' : ''}${query.multiline ? 'm' : ''}`);
  } catch (err) {
    throw new GrepError(`invalid regex: ${(err as Error).message}`);
  }
  const info = await stat(query.target).catch(() => undefined);
  const files: GrepFile[] = [];
  let collected = 0;
  // Files are read synchronously: a source file is a few KB, and a thread-pool round trip per stat and per read cost
  // more than the reading (20 000 files: 7 s against about 1 s). The walk yields to the event loop between files
  // often enough (`YIELD_EVERY`) that a UI stays live and an abort is seen.
  const searchOne = (abs: string, followLink = false) => {
    // Like ripgrep, a folder search skips files over the size cap (the fallback reads each file whole).
    // Opened without blocking or following a link, then checked through the handle: a file swapped for a FIFO since
    // the walk listed it must not stall this synchronous read (and with it the whole process).
    let buf: Buffer;
    let fd: number | undefined;
    try {
      fd = openSync(abs, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (followLink ? 0 : (constants.O_NOFOLLOW ?? 0)));
      const info = fstatSync(fd);
      if (!info.isFile() || info.size > MAX_FILE_BYTES) return;
      buf = readFileSync(fd);
    } catch {
      return;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    if (isBinary(buf)) return;
    const lines = grepText(decode(buf).text, regex, query);
    if (lines.length === 0) return;
    files.push({ abs, lines });
    collected += lines.length;
  };
  if (info?.isFile()) {
    if (info.size > MAX_FILE_BYTES) {
      const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;
      throw new GrepError(`${path.basename(query.target)} is ${mb(info.size)}; without ripgrep, grep searches files up to ${mb(MAX_FILE_BYTES)}. Search it with bash (grep -n) instead.`);
    }
    searchOne(query.target, true); // a file named on its own may be a link (the walk lists none)
    return { files };
  }
  const keep = query.glob ? picomatch(query.glob, { dot: true, basename: !query.glob.replace(/^!/, '').includes('/') }) : undefined;
  const budget = walkBudget(query.walkLimit);
  let searched = 0;
  for await (const file of walkFiles(query.target, new IgnoreRules(query.ignoreRoot), signal, budget)) {
    if (keep && !keep(file.rel)) continue;
    searchOne(file.abs);
    if (collected > COLLECT_LIMIT) return { files, truncated: true };
    if (++searched % YIELD_EVERY === 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    }
  }
  return budget.capped ? { files, walkCapped: true } : { files };
}

/** Matching lines (and context) of one file's text. Lines keep no terminator; a trailing \r stays (as in ripgrep). */
export function grepText(text: string, regex: RegExp, query: Pick<GrepQuery, 'multiline' | 'context' | 'filesOnly'>): GrepLine[] {
  const raw = text.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  const matched = new Set<number>();
  if (query.multiline) {
    const starts: number[] = [];
    let offset = 0;
    for (const line of raw) {
      starts.push(offset);
      offset += line.length + 1;
    }
    const lineAt = (pos: number) => {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= pos) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    regex.lastIndex = 0;
    for (let m = regex.exec(text); m; m = regex.exec(text)) {
      if (m.index >= offset) break;
      const first = lineAt(m.index);
      const last = m[0].length ? lineAt(m.index + m[0].length - 1) : first;
      for (let i = first; i <= last; i++) matched.add(i);
      if (query.filesOnly) break;
      if (m[0].length === 0) regex.lastIndex++;
    }
  } else {
    for (const [i, line] of raw.entries()) {
      regex.lastIndex = 0;
      if (regex.test(line)) {
        matched.add(i);
        if (query.filesOnly) break;
      }
    }
  }
  if (matched.size === 0) return [];
  const out = new Map<number, GrepLine>();
  for (const i of matched) {
    addLines(out, [{ n: i + 1, text: strip(raw[i]), match: true }]);
    if (query.context > 0 && !query.filesOnly) {
      const around: GrepLine[] = [];
      for (let j = Math.max(0, i - query.context); j <= Math.min(raw.length - 1, i + query.context); j++) {
        if (!matched.has(j)) around.push({ n: j + 1, text: strip(raw[j]), match: false });
      }
      addLines(out, around);
    }
  }
  return sortedLines(out);
}

const strip = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

