/**
 * Claude Code's model aliases, resolved to current model ids in one table: `--model sonnet`, `model: 'opus'`, an
 * agent file's `model: haiku`, and a `[1m]` suffix (`sonnet[1m]`: the 1M-token context window, sent as the
 * model id with the `context-1m-2025-08-07` beta). Update the table when a family gets a new model.
 */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: 'claude-sonnet-5-5',
  opus: 'claude-opus-4-6',
  haiku: 'claude-haiku-5-5',
};

/** The beta that opens the 1M-token context window on the models that have it. */
export const CONTEXT_1M_BETA = 'context-1m-2025-08-07';

const SUFFIX_1M = /\[1m\]$/i;

/** An alias (any case, with or without `[1m]`) as its model id (keeping `[1m]`); any other name as is. */
export function resolveModelAlias(name: string): string {
  const long = SUFFIX_1M.test(name);
  const base = long ? name.replace(SUFFIX_1M, '') : name;
  const id = MODEL_ALIASES[base.trim().toLowerCase()];
  if (!id) return name;
  return long ? `${id}[1m]` : id;
}

/** What the API is sent: the id without `[1m]`, and the beta header that suffix asks for. */
export function apiModel(name: string): { model: string; betas: string[] } {
  const resolved = resolveModelAlias(name);
  return SUFFIX_1M.test(resolved) ? { model: resolved.replace(SUFFIX_1M, ''), betas: [CONTEXT_1M_BETA] } : { model: resolved, betas: [] };
}

/** The `model-aliases` service: the table, for `/model` and agent files (`model: haiku`). */
export interface ModelAliases {
  table: Readonly<Record<string, string>>;
  resolve(name: string): string;
}

declare module '../../kernel/types.js' {
  interface Services {
    'model-aliases': ModelAliases;
  }
}
