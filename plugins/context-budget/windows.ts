/** Context windows by model name, first match wins; the config key `contextWindow` overrides them. */
const WINDOWS: Array<[RegExp, number]> = [
  [/\[1m\]|-1m\b/i, 1_000_000],
  [/^claude-/i, 200_000],
  [/^gpt-4o|^gpt-4\.1|^o[134]/i, 128_000],
];

export const DEFAULT_WINDOW = 200_000;

export function windowFor(model: string): number {
  for (const [pattern, size] of WINDOWS) if (pattern.test(model)) return size;
  return DEFAULT_WINDOW;
}
