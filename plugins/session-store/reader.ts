/**
 * Reads session files without ever holding a whole one in memory: the last compaction boundary is found by
 * scanning backwards from the end, then only the records after it are streamed line by line. A torn last
 * line (no newline) is never read; a corrupt line is skipped with a warning naming it.
 */
import { closeSync, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import type { MessageParam } from '../../kernel/index.js';
import { BOUNDARY_PREFIX, firstPrompt, parseRecord, type BoundaryRecord, type HeaderRecord, type SessionRecord, type Stats } from './records.js';
import { repairToolPairs } from './repair.js';
import { resolveSideFiles } from './side-files.js';
import { lastNewlineEnd } from './writer.js';

export interface LoadOptions {
  /** The session's side-file folder. */
  sideDir: string;
  warn(message: string): void;
}

export interface LoadedSession {
  header?: HeaderRecord;
  /** The history to resume with, repaired so every tool_use has its tool_result. */
  messages: MessageParam[];
  /** Messages that came from the file itself; the rest were synthesized by the repair at the tail. */
  fromFile: number;
  tailFix?: MessageParam;
  repairs: number;
  stats: Stats;
  /** Complete lines in the file (a torn tail excluded). */
  lines: number;
  /** The line the rebuild started after: the last boundary's, or 1 (the header). */
  startLine: number;
  /** Bytes read to rebuild (after the boundary search): follows the live context, not the file. */
  bytesStreamed: number;
  corruptLines: number;
  tornBytes: number;
}

const CHUNK = 64 * 1024;

export async function loadSession(file: string, opts: LoadOptions): Promise<LoadedSession> {
  const fd = openSync(file, 'r');
  let located: { header?: HeaderRecord; start: number; end: number; base: number; boundary?: BoundaryRecord; tornBytes: number };
  try {
    located = locate(fd, file, opts.warn);
  } finally {
    closeSync(fd);
  }
  const { header, start, end, base, boundary, tornBytes } = located;
  const messages: MessageParam[] = [];
  let stats: Stats = { turns: 0, costUsd: 0 };
  const apply = (record: SessionRecord, line: number) => {
    const warn = (message: string) => opts.warn(`${file}: line ${line}: ${message}`);
    if (record.type === 'message') {
      const batch = [record.message];
      resolveSideFiles(batch, record.refs, opts.sideDir, warn);
      messages.push(record.message);
      if (record.stats) stats = record.stats;
    } else if (record.type === 'boundary') {
      resolveSideFiles(record.messages, record.refs, opts.sideDir, warn);
      messages.length = 0;
      for (const message of record.messages) messages.push(message);
      stats = record.stats;
    } else if (record.type === 'usage') {
      stats = record.stats;
    }
  };
  if (boundary) apply(boundary, base);

  let line = base;
  let corruptLines = 0;
  if (start < end) {
    await forEachLine(file, start, end, (text) => {
      line++;
      if (!text) return;
      const parsed = parseRecord(text);
      if ('error' in parsed) {
        corruptLines++;
        opts.warn(`${file}: line ${line} is corrupt (${parsed.error}); skipped`);
      } else if ('record' in parsed) apply(parsed.record, line);
    });
  }
  const fromFile = messages.length;
  const repaired = repairToolPairs(messages);
  return {
    header,
    messages: repaired.messages,
    fromFile,
    tailFix: repaired.tailFix,
    repairs: repaired.fixes,
    stats,
    lines: line,
    startLine: base,
    bytesStreamed: end - start,
    corruptLines,
    tornBytes,
  };
}

/**
 * Streams the bytes [start, end) and calls `onLine` for each line, without its newline. Memory holds one
 * read chunk plus the line in progress, whatever the file size. (A hand-rolled split: `readline` costs
 * several times more per line, which shows at ten thousand messages.)
 */
async function forEachLine(file: string, start: number, end: number, onLine: (text: string) => void): Promise<void> {
  let rest: Buffer | undefined;
  for await (const chunk of createReadStream(file, { start, end: end - 1, highWaterMark: CHUNK * 16 })) {
    const buf: Buffer = rest ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    let from = 0;
    for (let nl = buf.indexOf(0x0a, from); nl !== -1; nl = buf.indexOf(0x0a, from)) {
      onLine(buf.toString('utf8', from, nl));
      from = nl + 1;
    }
    rest = from < buf.length ? buf.subarray(from) : undefined;
  }
  if (rest?.length) onLine(rest.toString('utf8'));
}

/** Header, end of the complete lines, and where to start streaming (after the last readable boundary). */
function locate(fd: number, file: string, warn: (message: string) => void) {
  const size = fstatSync(fd).size;
  const end = lastNewlineEnd(fd, size);
  if (end === 0) throw new Error(`${file}: no complete record (the file is empty or its only line is torn)`);
  const first = readLineAt(fd, 0, end);
  const parsedHeader = parseRecord(first.text);
  let header: HeaderRecord | undefined;
  if ('record' in parsedHeader && parsedHeader.record.type === 'header') header = parsedHeader.record;
  else warn(`${file}: line 1 is not a valid session header; skipped`);

  for (const offset of prefixedLinesBackward(fd, end, Buffer.from(BOUNDARY_PREFIX))) {
    const candidate = readLineAt(fd, offset, end);
    const parsed = parseRecord(candidate.text);
    if ('record' in parsed && parsed.record.type === 'boundary' && Number.isInteger(parsed.record.line)) {
      return { header, start: candidate.next, end, base: parsed.record.line as number, boundary: parsed.record, tornBytes: size - end };
    }
    warn(`${file}: the compaction boundary at byte ${offset} is corrupt (${'error' in parsed ? parsed.error : 'no line number'}); using an earlier one`);
  }
  return { header, start: first.next, end, base: 1, boundary: undefined, tornBytes: size - end };
}

/** Reads the line starting at `offset` (without its newline) and the offset of the next line. */
export function readLineAt(fd: number, offset: number, end: number): { text: string; next: number } {
  const parts: Buffer[] = [];
  let pos = offset;
  while (pos < end) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, end - pos));
    const n = readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) break;
    const nl = buf.subarray(0, n).indexOf(0x0a);
    if (nl !== -1) {
      parts.push(buf.subarray(0, nl));
      return { text: Buffer.concat(parts).toString('utf8'), next: pos + nl + 1 };
    }
    parts.push(buf.subarray(0, n));
    pos += n;
  }
  return { text: Buffer.concat(parts).toString('utf8'), next: end };
}

/** Offsets of the lines in [0, end), last first. */
export function* lineStartsBackward(fd: number, end: number): Generator<number> {
  const chunk = Buffer.allocUnsafe(CHUNK);
  // The last line ends at `end - 1` (its newline); line starts are 0 and every offset after a newline.
  let pos = end - 1;
  while (pos > 0) {
    const len = Math.min(CHUNK, pos);
    pos -= len;
    readSync(fd, chunk, 0, len, pos);
    for (let at = chunk.lastIndexOf(0x0a, len - 1); at !== -1; at = at === 0 ? -1 : chunk.lastIndexOf(0x0a, at - 1)) {
      yield pos + at + 1;
    }
  }
  if (end > 0) yield 0;
}

/**
 * Offsets of the lines that start with `prefix`, last first, found with a native search for newline +
 * prefix in large backward reads (consecutive reads overlap so no match is split). Line 1 never counts.
 */
export function* prefixedLinesBackward(fd: number, end: number, prefix: Buffer, size = CHUNK * 16): Generator<number> {
  const needle = Buffer.concat([Buffer.from([0x0a]), prefix]);
  const chunk = Buffer.allocUnsafe(size + needle.length);
  let hi = end;
  while (hi > 0) {
    const lo = Math.max(0, hi - size);
    // Read up to needle.length - 1 bytes past `hi` too, so a match straddling two reads is seen.
    const len = Math.min(end, hi + needle.length - 1) - lo;
    readSync(fd, chunk, 0, len, lo);
    const view = chunk.subarray(0, len);
    for (let at = view.lastIndexOf(needle); at !== -1; at = at === 0 ? -1 : view.lastIndexOf(needle, at - 1)) {
      // Only matches whose newline lies in [lo, hi): the others belong to the next read.
      if (lo + at < hi) yield lo + at + 1;
    }
    hi = lo;
  }
}

export interface SessionSummary {
  id: string;
  file: string;
  lastActivity: Date;
  firstPrompt?: string;
  turns: number;
  costUsd: number;
  parent?: string;
  /** A sub-agent's own session (its header names the parent that started it; a fork's names its source). */
  subagent: boolean;
  bytes: number;
}

/** What a listing shows, read from the head and the tail of the file only. */
export async function summarize(file: string, id: string, mtime: Date, bytes: number): Promise<SessionSummary> {
  const summary: SessionSummary = { id, file, lastActivity: mtime, turns: 0, costUsd: 0, subagent: false, bytes };
  let header: HeaderRecord | undefined;
  let afterHeader: SessionRecord | undefined;
  const fd = openSync(file, 'r');
  try {
    const end = lastNewlineEnd(fd, fstatSync(fd).size);
    let lines = 0;
    for (let offset = 0; offset < end && lines < 200 && summary.firstPrompt === undefined; lines++) {
      const { text, next } = readLineAt(fd, offset, end);
      offset = next;
      const parsed = parseRecord(text);
      if (!('record' in parsed)) continue;
      const record = parsed.record;
      if (record.type === 'header') {
        header = record;
        summary.parent = record.parent;
        continue;
      }
      if (header && !afterHeader) afterHeader = record;
      if (record.type === 'message') summary.firstPrompt = firstPrompt([record.message]);
      else if (record.type === 'boundary') summary.firstPrompt = firstPrompt(record.messages);
    }
    for (const offset of lineStartsBackward(fd, end)) {
      const parsed = parseRecord(readLineAt(fd, offset, end).text);
      if (!('record' in parsed)) continue;
      const record = parsed.record;
      const stats = record.type === 'header' ? undefined : record.stats;
      if (stats) {
        summary.turns = stats.turns;
        summary.costUsd = stats.costUsd;
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
  // Files written before headers said so: a parent without a fork's first boundary is a sub-agent's.
  const forked = afterHeader?.type === 'boundary' && afterHeader.trigger === 'fork';
  summary.subagent = header?.subagent === true || (Boolean(header?.parent) && !forked);
  return summary;
}
