import { randomUUID } from 'node:crypto';
import type { Kernel } from './kernel.js';
import type { ContentBlock, Session, SessionInit, Turn } from './types.js';

/** Creates a session from the kernel's config and runs `sessionStart` (which may resume history into it). */
export async function startSession(kernel: Kernel, init: Partial<SessionInit> = {}): Promise<Session> {
  const session = createSession(kernel, init);
  await kernel.hooks.sessionStart.promise(session);
  kernel.state.set({ messages: session.messages.slice() });
  kernel.emit({ type: 'session_start', session });
  // Start-up diagnostics (`--verbose`): when the session became ready, counted from process start.
  kernel.log('debug', `session ${session.id} ready with ${session.messages.length} messages, ${Math.round(process.uptime() * 1000)} ms after process start`, 'kernel');
  return session;
}

/** A session object without running `sessionStart`: the context for commands run outside a conversation. */
export function createSession(kernel: Kernel, init: Partial<SessionInit> = {}): Session {
  const config = kernel.config;
  return {
    id: init.id ?? randomUUID(),
    cwd: init.cwd ?? config.cwd,
    projectRoot: init.projectRoot ?? config.projectRoot,
    model: init.model ?? config.model,
    smallModel: init.smallModel ?? config.smallModel,
    permissionMode: init.permissionMode ?? config.permissionMode,
    preset: init.preset ?? (typeof config.preset === 'string' ? config.preset : config.preset.name),
    parentSessionId: init.parentSessionId,
    systemPrompt: init.systemPrompt,
    appendSystemPrompt: init.appendSystemPrompt,
    resume: init.resume,
    messages: [],
    data: new Map(),
    startedAt: Date.now(),
  };
}

/** A turn-shaped context for model calls and tools run outside a model turn (a compaction, a user's `!command`). */
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
