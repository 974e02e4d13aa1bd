import { definePlugin, Stage, type Decision, type Session, type ToolCall } from '../../kernel/index.js';

/**
 * Session-scoped memory of the user's answers: a tool the user denied is not asked about again this session,
 * and "Allow this session" lets a tool's calls through (the permissions plugin still applies its deny rules,
 * shell guard and always-asked paths first). Nothing is persisted.
 */
export interface DenialLogService {
  /** The user chose "Allow this session" for this tool (and has not denied it since). */
  isAllowed(session: Session, toolName: string): boolean;
  isDenied(session: Session, toolName: string): boolean;
  /** Forgets the user's answers about a tool (or all tools), e.g. for a `/permissions` command. */
  forget(session: Session, toolName?: string): void;
}

declare module '../../kernel/types.js' {
  interface Services {
    'denial-log': DenialLogService;
  }
}

export const PREVIOUSLY_DENIED = 'Permission denied: previously denied by the user';

interface Log {
  denied: Set<string>;
  allowed: Set<string>;
}

const KEY = 'denial-log';

function logOf(session: Session): Log {
  let log = session.data.get(KEY) as Log | undefined;
  if (!log) {
    log = { denied: new Set(), allowed: new Set() };
    session.data.set(KEY, log);
  }
  return log;
}

export default definePlugin(() => ({
  name: 'denial-log',
  kernel: '^1.0.0',
  dependencies: ['permissions'],
  apply(kernel) {
    // The `permission` event carries the call but not its session: remember which session asked, by call id,
    // from the moment the call reaches prePermission until its result is in.
    const asking = new Map<string, Session>();

    kernel.services.provide('denial-log', {
      isAllowed: (session, name) => logOf(session).allowed.has(name),
      isDenied: (session, name) => logOf(session).denied.has(name),
      forget(session, name) {
        const log = logOf(session);
        if (name === undefined) {
          log.denied.clear();
          log.allowed.clear();
        } else {
          log.denied.delete(name);
          log.allowed.delete(name);
        }
      },
    });

    kernel.hooks.prePermission.tapPromise({ name: 'denial-log', stage: Stage.EARLY }, async (call: ToolCall, turn): Promise<Decision | undefined> => {
      const log = logOf(turn.session);
      asking.set(call.id, turn.session);
      if (log.denied.has(call.name) && !log.allowed.has(call.name)) return { behavior: 'deny', reason: PREVIOUSLY_DENIED };
      return undefined;
    });

    kernel.hooks.event.tap('denial-log', (event) => {
      if (event.type === 'permission') {
        const session = asking.get(event.call.id);
        if (!session || event.source !== 'user' || !event.choice) return;
        const log = logOf(session);
        if (event.choice === 'allow_session') {
          log.allowed.add(event.call.name);
          log.denied.delete(event.call.name);
        } else if (event.choice === 'deny' || event.choice === 'deny_session') {
          log.denied.add(event.call.name);
          log.allowed.delete(event.call.name);
        }
      } else if (event.type === 'tool_results') {
        const content = event.message.content;
        if (Array.isArray(content)) for (const block of content) if (block.type === 'tool_result') asking.delete(block.tool_use_id);
      }
    });
  },
}));
