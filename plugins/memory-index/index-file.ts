import { statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

export const INDEX_FILE = path.join('.keel', 'MEMORY.md');
export const TOPIC_DIR = path.join('.keel', 'memory');

export interface IndexEntry {
  name: string;
  /** Relative to `.keel/`, as written in the index (`memory/file.md`). */
  target: string;
  about?: string;
}

/** Lines of the form `- name → memory/file.md (what it holds)` (`->` works too). */
export function parseIndex(text: string): IndexEntry[] {
  const entries: IndexEntry[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s*[-*]\s*(.+?)\s*(?:\u2192|->)\s*(\S+)(?:\s*\((.*)\))?\s*$/.exec(line);
    if (match) entries.push({ name: match[1]!.replace(/^\[|\]$/g, ''), target: match[2]!, about: match[3] });
  }
  return entries;
}

/** More of an index or topic than this is not read: the prompt shows a few thousand tokens of it at most. */
export const MAX_MEMORY_BYTES = 1024 * 1024;

export async function topicFiles(root: string): Promise<string[]> {
  try {
    return (await readdir(path.join(root, TOPIC_DIR))).filter((name) => name.endsWith('.md')).sort();
  } catch {
    return [];
  }
}

/**
 * mtime and size: a cheap key to reread the index only when it changed. Asked on every turn, so one synchronous
 * stat that reports a missing file without an exception (most projects have no index), not a thread-pool round trip.
 */
export async function stamp(file: string): Promise<string | undefined> {
  try {
    const s = statSync(file, { throwIfNoEntry: false });
    return s ? `${s.mtimeMs}:${s.size}` : undefined;
  } catch {
    return undefined;
  }
}
