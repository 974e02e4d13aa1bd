import { z } from 'zod';
import { definePlugin, KeelError } from '../../kernel/index.js';
import type { OpenAIQuery } from './query.js';

export interface OpenAISettings {
  /** The request field that carries the output limit: `max_tokens` (most compatible servers) or `max_completion_tokens` (OpenAI's reasoning models). */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

export interface QueryOpenAIOptions extends Partial<OpenAISettings> {
  apiKey?: string;
  baseURL?: string;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Settings of the OpenAI-compatible provider; see docs/query.md. */
    openai?: Partial<OpenAISettings>;
  }
}

const openaiConfig = z.object({ maxTokensField: z.enum(['max_tokens', 'max_completion_tokens']) }).partial().strict();

const NAME = 'query-openai';

/**
 * Answers the `query` hook when config `provider` is `openai`: any OpenAI-compatible Chat Completions
 * endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter) through the `openai` package, with the
 * shared `retry` service and `usage` accounting. Messages, tools and results are translated both ways. The
 * request code and the client load on the first request this provider answers.
 */
export default definePlugin((opts: QueryOpenAIOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { openai: openaiConfig },
  apply(kernel) {
    let query: OpenAIQuery | undefined;
    kernel.hooks.query.tapPromise(NAME, async (request, turn) => {
      if (kernel.config.provider !== 'openai') return undefined;
      const parsed = openaiConfig.safeParse(kernel.config.openai ?? {});
      if (!parsed.success) throw new KeelError(`config openai.${parsed.error.issues[0].path.join('.')}: ${parsed.error.issues[0].message}`, { exitCode: 2 });
      const settings: OpenAISettings = { maxTokensField: 'max_tokens', ...stripUndefined(opts), ...parsed.data };
      if (!query) {
        const { openAIQuery } = await import('./cold.js');
        query ??= openAIQuery(kernel, opts);
      }
      return query(request, turn, settings);
    });
  },
}));

function stripUndefined(opts: QueryOpenAIOptions): Partial<OpenAISettings> {
  return opts.maxTokensField ? { maxTokensField: opts.maxTokensField } : {};
}
