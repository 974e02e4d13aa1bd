/**
 * Routes requests of several conversations sharing one scripted server (a parent and its sub-agents): each
 * conversation is keyed by the start of its first user message, and its Nth request gets its Nth turn.
 */
import type { RecordedRequest, ScriptedTurn, ServerOptions } from './anthropic-server.js';

export type ConversationStep = ScriptedTurn | ((request: RecordedRequest) => ScriptedTurn);

export function firstUserText(request: RecordedRequest): string {
  const first = request.body?.messages?.[0];
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  return (first.content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('');
}

/** The requests of one conversation, in order. */
export function conversation(requests: RecordedRequest[], key: string): RecordedRequest[] {
  return requests.filter((r) => r.path.endsWith('/messages') && firstUserText(r).startsWith(key));
}

export function routeConversations(scripts: Record<string, ConversationStep[]>): ServerOptions['route'] {
  return (request) => {
    const text = firstUserText(request);
    const key = Object.keys(scripts).find((k) => text.startsWith(k));
    if (!key) return undefined;
    const index = (request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
    const step = scripts[key]![index];
    if (!step) return { status: 500, errorMessage: `conversation "${key}" has no turn ${index}` };
    return typeof step === 'function' ? step(request) : step;
  };
}

/** Text of every tool_result block in a request's last message. */
export function toolResultsOf(request: RecordedRequest): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = request.body.messages[request.body.messages.length - 1];
  if (!Array.isArray(last?.content)) return [];
  return last.content
    .filter((b: { type: string }) => b.type === 'tool_result')
    .map((b: { tool_use_id: string; content: unknown; is_error?: boolean }) => ({
      tool_use_id: b.tool_use_id,
      is_error: b.is_error,
      content: typeof b.content === 'string' ? b.content : (b.content as Array<{ text?: string }>).map((c) => c.text ?? '').join(''),
    }));
}

export function toolNamesOf(request: RecordedRequest): string[] {
  return (request.body.tools ?? []).map((t: { name: string }) => t.name);
}
