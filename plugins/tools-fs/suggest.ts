import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { existsSync } from 'node:fs';

/** A helpful line for a path that does not exist: near names in its folder, or the deepest folder that exists. */
export async function missingPathHint(abs: string, shown: (p: string) => string): Promise<string> {
  const dir = path.dirname(abs);
  if (!existsSync(dir)) {
    let up = dir;
    while (!existsSync(up) && path.dirname(up) !== up) up = path.dirname(up);
    return ` The folder ${shown(dir)} does not exist either; the deepest existing folder is ${shown(up)}.`;
  }
  const names = await readdir(dir).catch(() => [] as string[]);
  const near = nearNames(path.basename(abs), names);
  return near.length ? ` Did you mean ${near.map((n) => shown(path.join(dir, n))).join(', ')}?` : '';
}

/** Up to three names close to `wanted`: same stem, different case, or a small edit distance. */
export function nearNames(wanted: string, names: string[]): string[] {
  const lower = wanted.toLowerCase();
  const stem = lower.replace(/\.[^.]*$/, '');
  const scored: Array<{ name: string; score: number }> = [];
  for (const name of names) {
    const l = name.toLowerCase();
    let score: number | undefined;
    if (l === lower) score = 0;
    else if (l.replace(/\.[^.]*$/, '') === stem) score = 1;
    else {
      const d = distance(lower, l);
      if (d <= Math.max(2, Math.floor(lower.length / 4))) score = 1 + d;
    }
    if (score !== undefined) scored.push({ name, score });
  }
  return scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name)).slice(0, 3).map((s) => s.name);
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}
