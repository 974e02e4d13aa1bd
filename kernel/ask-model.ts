/** Auxiliary model calls (summaries, page digests) through the `query` hook, by tier. */
import { KeelError } from './errors.js';
import type { Kernel } from './kernel.js';
import type { ContentBlock, ModelAsk, QueryRequest, QueryResponse, Session, Turn } from './types.js';

/**
 * Calls the model of `request.tier`: `main` is the session's model, `small` its small model. Small calls
 * never stream to the UI; the provider accounts them apart.
 */
export async function askModel(kernel: Kernel, request: ModelAsk, turn: Turn): Promise<QueryResponse> {
  const small = request.tier === 'small';
  const full: QueryRequest = {
    ...request,
    model: request.model ?? (small ? turn.session.smallModel : turn.session.model),
    tools: request.tools ?? [],
    maxTokens: request.maxTokens ?? kernel.config.maxTokens,
    signal: request.signal ?? turn.signal,
    stream: small ? false : (request.stream ?? true),
  };
  const response = await kernel.hooks.query.promise(full, turn);
  if (!response) {
    throw new KeelError(`no provider answered the ${request.tier} query: add a provider plugin (query-anthropic or query-openai) matching config \`provider\``);
  }
  return response;
}

/** A turn-shaped context for calls made outside a model turn (a compaction service gets none). */
export function auxiliaryTurn(kernel: Kernel, session: Session, signal?: AbortSignal): Turn {
  return { session, kernel, index: 0, signal: signal ?? new AbortController().signal, data: new Map(), emit: (event) => kernel.emit(event) };
}

/** The text blocks of a response, joined. */
export function responseText(content: ContentBlock[]): string {
  return content
    .filter((block): block is Extract<ContentBlock, { type: 'text' }> => block.type === 'text')
    .map((block) => block.text)
    .join('');
}
