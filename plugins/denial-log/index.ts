import { definePlugin, Stage, type Decision, type Session, type ToolCall } from '../../kernel/index.js';

/**
 * Session-scoped memory of the user's answers, so the user is never asked twice about what they refused:
 * "Deny" refuses that call, and the same call (tool and input) is refused again without asking; "Deny this
 * session" refuses every call of the tool for the rest of the session; "Allow this session" lets a tool's
 * calls through and overrides earlier denials (the permissions plugin still applies its deny rules, shell
 * guard and always-asked paths first). Nothing is persisted.
 */
export interface DenialLogService {
  /** The user chose "Allow this session" for this tool (and has not denied it since). */
  isAllowed(session: Session, toolName: string): boolean;
  /** The user chose "Deny this session" for this tool (and has not allowed it since). */
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
  /** Tools denied for the session. */
  denied: Set<string>;
  /** Calls denied once, by `callKey`: asking again about the very same call would ask twice. */
  deniedCalls: Set<string>;
  allowed: Set<string>;
}

function callKey(call: ToolCall): string {
  return `${call.name}\0${JSON.stringify(call.input) ?? ''}`;
}

function forgetCalls(log: Log, toolName: string): void {
  for (const key of log.deniedCalls) if (key.startsWith(`${toolName}\0`)) log.deniedCalls.delete(key);
}

const KEY = 'denial-log';

function logOf(session: Session): Log {
  let log = session.data.get(KEY) as Log | undefined;
  if (!log) {
    log = { denied: new Set(), deniedCalls: new Set(), allowed: new Set() };
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
          log.deniedCalls.clear();
          log.allowed.clear();
        } else {
          log.denied.delete(name);
          forgetCalls(log, name);
          log.allowed.delete(name);
        }
      },
    });

    kernel.hooks.prePermission.tapPromise({ name: 'denial-log', stage: Stage.EARLY }, async (call: ToolCall, turn): Promise<Decision | undefined> => {
      const log = logOf(turn.session);
      asking.set(call.id, turn.session);
      // A call denied after "Allow this session" stays denied; allow_session clears the denials made before it.
      if (log.deniedCalls.has(callKey(call))) return { behavior: 'deny', reason: PREVIOUSLY_DENIED };
      if (log.denied.has(call.name) && !log.allowed.has(call.name)) return { behavior: 'deny', reason: PREVIOUSLY_DENIED };
      return undefined;
    });

    kernel.hooks.event.tap('denial-log', (event) => {
      if (event.type === 'permission') {
        const session = asking.get(event.call.id);
        if (!session || event.source !== 'user' || !event.choice) return;
        const log = logOf(session);
        const name = event.call.name;
        if (event.choice === 'allow_session') {
          log.allowed.add(name);
          log.denied.delete(name);
          forgetCalls(log, name);
        } else if (event.choice === 'deny') {
          log.deniedCalls.add(callKey(event.call));
        } else if (event.choice === 'deny_session') {
          log.denied.add(name);
          log.allowed.delete(name);
        }
      } else if (event.type === 'tool_results') {
        const content = event.message.content;
        if (Array.isArray(content)) for (const block of content) if (block.type === 'tool_result') asking.delete(block.tool_use_id);
      }
    });
  },
}));
