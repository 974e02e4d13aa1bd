/**
 * Context windows by model id prefix, the longest prefix wins; the config key `contextWindow` overrides them.
 * The budget prefers the window the `usage` plugin publishes in `kernel.state.contextWindow`: this table is the
 * fallback without it, and holds the same figures.
 */
const WINDOWS: Record<string, number> = {
  'claude-': 200_000,
  'gpt-4o': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-5': 400_000,
  o1: 200_000,
  o3: 200_000,
  'o4-mini': 200_000,
};

/** The 1M-token context variants (`claude-sonnet-4-5[1m]`, `…-1m`), whatever the family. */
const ONE_MILLION = /\[1m\]|-1m\b/i;

/** For models the table does not know (local models behind an OpenAI-compatible server): the smaller, safer guess. */
export const DEFAULT_WINDOW = 128_000;

export function windowFor(model: string): number {
  if (ONE_MILLION.test(model)) return 1_000_000;
  let best: string | undefined;
  for (const key of Object.keys(WINDOWS)) {
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? DEFAULT_WINDOW : WINDOWS[best]!;
}
