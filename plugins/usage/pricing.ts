/** Prices per model and the cost of a call, priced as the providers do (cache writes and reads apart). */
import type { TokenUsage } from '../../kernel/index.js';

/** USD per million tokens. Cache prices default to Anthropic's ratios: writes 1.25 × input, reads 0.1 × input. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheWrite?: number;
  cacheRead?: number;
}

/** Keyed by model id or id prefix; the longest matching key wins ("claude-haiku-4-5-20251001" → "claude-haiku-4-5"). */
export const BUILTIN_PRICES: Record<string, ModelPrice> = {
  // Family defaults (also the defaults of config: claude-sonnet-5-5, claude-haiku-5-5), then older ids that differ.
  'claude-opus': { input: 5, output: 25 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-opus-4-1': { input: 15, output: 75 },
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-opus-4-6': { input: 5, output: 25 },
  'claude-3-opus': { input: 15, output: 75 },
  'claude-sonnet': { input: 3, output: 15 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-3-5-sonnet': { input: 3, output: 15 },
  'claude-haiku': { input: 1, output: 5 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'claude-3-haiku': { input: 0.25, output: 1.25, cacheWrite: 0.3, cacheRead: 0.03 },
  'gpt-4o': { input: 2.5, output: 10, cacheWrite: 2.5, cacheRead: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheWrite: 0.15, cacheRead: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cacheWrite: 2, cacheRead: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheWrite: 0.4, cacheRead: 0.1 },
  'gpt-5': { input: 1.25, output: 10, cacheWrite: 1.25, cacheRead: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheWrite: 0.25, cacheRead: 0.025 },
};

function longestPrefix(table: Record<string, ModelPrice>, model: string): ModelPrice | undefined {
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : table[best];
}

/** Configured prices first (exact id or prefix), then the built-in table. */
export function findPrice(model: string, configured: Record<string, ModelPrice> = {}): ModelPrice | undefined {
  return longestPrefix(configured, model) ?? longestPrefix(BUILTIN_PRICES, model);
}

/** The cost of one call in USD. */
export function costOf(price: ModelPrice, usage: TokenUsage): number {
  const cacheWrite = price.cacheWrite ?? price.input * 1.25;
  const cacheRead = price.cacheRead ?? price.input * 0.1;
  return (
    (usage.input_tokens * price.input +
      usage.output_tokens * price.output +
      usage.cache_creation_input_tokens * cacheWrite +
      usage.cache_read_input_tokens * cacheRead) /
    1_000_000
  );
}

/** The 1M-token context variants (`claude-sonnet-4-5[1m]`, `…-1m`), whatever the family. */
const ONE_MILLION = /\[1m\]|-1m\b/i;

/** Context windows by id prefix; `contextWindow` in config overrides. */
const WINDOWS: Record<string, number> = {
  'claude-': 200_000,
  'gpt-4o': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-5': 400_000,
  o3: 200_000,
  'o4-mini': 200_000,
};

/** For models the table does not know (local models behind an OpenAI-compatible server). */
export const DEFAULT_WINDOW = 128_000;

export function windowOf(model: string): number {
  if (ONE_MILLION.test(model)) return 1_000_000;
  let best: string | undefined;
  for (const key of Object.keys(WINDOWS)) {
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? DEFAULT_WINDOW : WINDOWS[best];
}
