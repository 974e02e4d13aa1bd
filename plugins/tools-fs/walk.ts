import { opendir } from 'node:fs/promises';
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

/**
 * Files under `base`, skipping `.git`, symbolic links and whatever the ignore rules exclude (ignored folders are
 * not entered). Stops, setting `budget.capped`, once it has visited `budget.maxEntries` entries; folders are
 * read as streams, so one enormous folder is not loaded whole.
 */
export async function* walkFiles(base: string, rules: IgnoreRules, signal?: AbortSignal, budget = walkBudget()): AsyncGenerator<WalkedFile> {
  const stack = [base];
  while (stack.length > 0) {
    signal?.throwIfAborted();
    const dir = stack.pop()!;
    const handle = await opendir(dir).catch(() => undefined);
    if (!handle) continue;
    for await (const entry of handle) {
      if (++budget.visited > budget.maxEntries) {
        budget.capped = true;
        // Leaving the loop early closes the folder handle.
        return;
      }
      if (budget.visited % 4096 === 0) signal?.throwIfAborted();
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name === '.git' || rules.ignored(abs, true)) continue;
        stack.push(abs);
      } else if (entry.isFile()) {
        if (rules.ignored(abs, false)) continue;
        yield { abs, rel: toPosix(path.relative(base, abs)) };
      }
    }
  }
}
