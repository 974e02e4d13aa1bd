/** "Did you mean": the known names near a mistyped one, for sub-commands and config keys. */
import { distance } from 'fastest-levenshtein';

/**
 * Up to three of `names` within a small edit distance of `wanted`, nearest first: a third of its length, at least
 * `least` (2 lets a swap of two letters through, `modle` → `model`; sub-commands take 1, since a lone word that is
 * near one is refused as a typo rather than sent as a prompt).
 */
export function nearNames(wanted: string, names: Iterable<string>, least = 2): string[] {
  const lower = wanted.toLowerCase();
  const limit = Math.max(least, Math.floor(lower.length / 3));
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
