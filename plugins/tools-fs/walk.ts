import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { IgnoreRules } from './ignore-rules.js';
import { toPosix } from './paths.js';

export interface WalkedFile {
  abs: string;
  /** POSIX path relative to the walk's base. */
  rel: string;
}

/** Files under `base`, skipping `.git`, symbolic links and whatever the ignore rules exclude (ignored folders are not entered). */
export async function* walkFiles(base: string, rules: IgnoreRules, signal?: AbortSignal): AsyncGenerator<WalkedFile> {
  const stack = [base];
  while (stack.length > 0) {
    signal?.throwIfAborted();
    const dir = stack.pop()!;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
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
