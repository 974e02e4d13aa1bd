import { opendirSync, type Dir } from 'node:fs';
import path from 'node:path';
import type { IgnoreRules } from './ignore-rules.js';
import { toPosix } from './paths.js';

export interface WalkedFile {
  abs: string;
  /** POSIX path relative to the walk's base. */
  rel: string;
}

/** Folder entries a walk visits at most by default: a huge tree must neither exhaust memory nor run for ages. */
export const MAX_WALK_ENTRIES = 200_000;

/** How far a walk may go, and (after it) whether it stopped at the cap. */
export interface WalkBudget {
  maxEntries: number;
  visited: number;
  capped: boolean;
}

export const walkBudget = (maxEntries = MAX_WALK_ENTRIES): WalkBudget => ({ maxEntries, visited: 0, capped: false });

/** Entries read between yields to the event loop. */
const YIELD_EVERY = 256;

/**
 * Files under `base`, skipping `.git`, symbolic links and whatever the ignore rules exclude (ignored folders are
 * not entered). Stops, setting `budget.capped`, once it has visited `budget.maxEntries` entries; folders are
 * read as streams, so one enormous folder is not loaded whole.
 *
 * Folders are read synchronously, a few entries at a time, yielding to the event loop every `YIELD_EVERY` entries
 * (so a UI stays live and an abort is seen): a thread-pool round trip per folder and per batch of entries made a
 * walk of 20 000 files take about a second, nearly all of it waiting.
 */
export async function* walkFiles(base: string, rules: IgnoreRules, signal?: AbortSignal, budget = walkBudget()): AsyncGenerator<WalkedFile> {
  const stack = [base];
  let sinceYield = 0;
  while (stack.length > 0) {
    signal?.throwIfAborted();
    const dir = stack.pop()!;
    let handle: Dir;
    try {
      handle = opendirSync(dir);
    } catch {
      continue;
    }
    try {
      for (let entry = readEntry(handle); entry; entry = readEntry(handle)) {
        if (++budget.visited > budget.maxEntries) {
          budget.capped = true;
          return;
        }
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
          signal?.throwIfAborted();
        }
        const abs = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name === '.git' || rules.ignored(abs, true)) continue;
          stack.push(abs);
        } else if (entry.isFile()) {
          if (rules.ignored(abs, false)) continue;
          yield { abs, rel: toPosix(path.relative(base, abs)) };
        }
      }
    } finally {
      handle.closeSync();
    }
  }
}

/** The folder's next entry, or null at its end or when it can no longer be read (removed while walked). */
function readEntry(handle: Dir) {
  try {
    return handle.readSync();
  } catch {
    return null;
  }
}
