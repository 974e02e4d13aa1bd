import type { Kernel, MessageParam, QueryResponse, Session, Turn } from '../../kernel/index.js';

export interface SmallCall {
  system: string;
  messages: MessageParam[];
  maxTokens: number;
  signal?: AbortSignal;
  /** Reuse a live turn when there is one; otherwise a minimal one is built for the hook. */
  turn?: Turn;
}

/** A turn-shaped object for calls made outside a model turn (the compaction service gets none). */
export function auxiliaryTurn(kernel: Kernel, session: Session, signal?: AbortSignal): Turn {
  return { session, kernel, index: 0, signal: signal ?? new AbortController().signal, data: new Map(), emit: (event) => kernel.emit(event) };
}

/** Asks the small model through the `query` service when present, else the `query` hook directly. */
export async function askSmallModel(kernel: Kernel, session: Session, call: SmallCall): Promise<QueryResponse> {
  const turn = call.turn ?? auxiliaryTurn(kernel, session, call.signal);
  const system = [{ type: 'text' as const, text: call.system }];
  const signal = call.signal ?? turn.signal;
  const service = kernel.services.get('query');
  if (service) {
    return service.ask({ tier: 'small', model: session.smallModel, system, messages: call.messages, tools: [], maxTokens: call.maxTokens, stream: false, signal }, turn);
  }
  const response = await kernel.hooks.query.promise(
    { tier: 'small', model: session.smallModel, system, messages: call.messages, tools: [], maxTokens: call.maxTokens, stream: false, signal },
    turn,
  );
  if (!response) throw new Error('no plugin answered the query hook for the small model');
  return response;
}

export function responseText(response: QueryResponse): string {
  return response.content
    .filter((block): block is Extract<QueryResponse['content'][number], { type: 'text' }> => block.type === 'text')
    .map((block) => block.text)
    .join('');
}
