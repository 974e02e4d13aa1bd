import { definePlugin, Stage, type Decision, type Session, type ToolCall, type Turn } from '../../kernel/index.js';

/**
 * Session-scoped memory of the user's answers, as Claude Code keeps them:
 * - "Deny" refuses that call. Within the same prompt the very same call (tool and input) is refused again
 *   without asking, so the user is not asked twice in a row; the next prompt asks again.
 * - "Deny, and don't ask again" adds a visible deny rule for the tool to the session's rules (the permissions
 *   plugin's `session-permissions` service): `/permissions` lists it, and `/permissions remove <tool>` lifts it.
 * - "Allow this session" lets a tool's calls through and overrides earlier "Deny" answers (the permissions plugin
 *   still applies its deny rules, shell guard and always-asked paths first).
 * Nothing is persisted.
 */
export interface DenialLogService {
  /** The user chose "Allow this session" for this tool (and has not denied it since). */
  isAllowed(session: Session, toolName: string): boolean;
  /** A session deny rule covers every call of the tool ("Deny, and don't ask again", or `/permissions deny <tool>`). */
  isDenied(session: Session, toolName: string): boolean;
  /** Forgets the user's allowances and this prompt's denials about a tool (or all tools). */
  forget(session: Session, toolName?: string): void;
}

declare module '../../kernel/types.js' {
  interface Services {
    'denial-log': DenialLogService;
  }
}

export const PREVIOUSLY_DENIED = 'Permission denied: the user denied this very call a moment ago';

/** What denial-log needs from the permissions plugin's `session-permissions` service. */
interface SessionDenyRules {
  deny(session: Session, rules: string[], source: string): () => void;
  denies(session: Session, toolName: string): boolean;
}

interface Log {
  /** Calls denied with "Deny" during `run`, by `callKey`. */
  deniedCalls: Set<string>;
  /** The run (one user prompt) the denied calls belong to. */
  run: object | undefined;
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
    log = { deniedCalls: new Set(), run: undefined, allowed: new Set() };
    session.data.set(KEY, log);
  }
  return log;
}

/** One user prompt's run: its turn allowance is made once per run (the signal, outside the loop). */
function runOf(turn: Turn): object {
  return turn.turns ?? turn.signal;
}

/** Denials of an earlier prompt are forgotten when a new prompt's run asks. */
function enterRun(log: Log, run: object): void {
  if (log.run === run) return;
  log.run = run;
  log.deniedCalls.clear();
}

export default definePlugin(() => ({
  name: 'denial-log',
  kernel: '^1.0.0',
  dependencies: ['permissions'],
  apply(kernel) {
    // The `permission` event carries the call but not its session: remember which session and run asked, by
    // call id, from the moment the call reaches prePermission until its result is in.
    const asking = new Map<string, { session: Session; run: object }>();
    const rules = () => {
      const service = kernel.services.get('session-permissions') as Partial<SessionDenyRules> | undefined;
      return typeof service?.deny === 'function' && typeof service.denies === 'function' ? (service as SessionDenyRules) : undefined;
    };

    kernel.services.provide('denial-log', {
      isAllowed: (session, name) => logOf(session).allowed.has(name),
      isDenied: (session, name) => rules()?.denies(session, name) ?? false,
      forget(session, name) {
        const log = logOf(session);
        if (name === undefined) {
          log.deniedCalls.clear();
          log.allowed.clear();
        } else {
          forgetCalls(log, name);
          log.allowed.delete(name);
        }
      },
    });

    kernel.hooks.prePermission.tapPromise({ name: 'denial-log', stage: Stage.EARLY }, async (call: ToolCall, turn): Promise<Decision | undefined> => {
      const log = logOf(turn.session);
      const run = runOf(turn);
      enterRun(log, run);
      asking.set(call.id, { session: turn.session, run });
      // A call denied after "Allow this session" stays denied; allow_session clears the denials made before it.
      if (log.deniedCalls.has(callKey(call))) return { behavior: 'deny', reason: PREVIOUSLY_DENIED };
      return undefined;
    });

    kernel.hooks.event.tap('denial-log', (event) => {
      if (event.type === 'permission') {
        const asked = asking.get(event.call.id);
        if (!asked || event.source !== 'user' || !event.choice) return;
        const log = logOf(asked.session);
        const name = event.call.name;
        if (event.choice === 'allow_session') {
          log.allowed.add(name);
          forgetCalls(log, name);
        } else if (event.choice === 'deny') {
          enterRun(log, asked.run);
          log.deniedCalls.add(callKey(event.call));
        } else if (event.choice === 'deny_session') {
          log.allowed.delete(name);
          const service = rules();
          if (service && !service.denies(asked.session, name)) service.deny(asked.session, [name], 'your answer');
        }
      } else if (event.type === 'tool_results') {
        const content = event.message.content;
        if (Array.isArray(content)) for (const block of content) if (block.type === 'tool_result') asking.delete(block.tool_use_id);
      }
    });
  },
}));
