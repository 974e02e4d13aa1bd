/** "Did you mean": the known names near a mistyped one, for sub-commands and config keys. */
import { distance } from 'fastest-levenshtein';

/** Up to three of `names` within a small edit distance of `wanted` (a third of its length, at least 1), nearest first. */
export function nearNames(wanted: string, names: Iterable<string>): string[] {
  const lower = wanted.toLowerCase();
  const limit = Math.max(1, Math.floor(lower.length / 3));
  return [...new Set(names)]
    .map((name) => ({ name, d: distance(lower, name.toLowerCase()) }))
    .filter((s) => s.d > 0 && s.d <= limit)
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .slice(0, 3)
    .map((s) => s.name);
}

/** " (did you mean a, b?)" or "". */
export function didYouMean(near: string[], prefix = ''): string {
  return near.length ? ` (did you mean ${near.map((n) => `${prefix}${n}`).join(', ')}?)` : '';
}
