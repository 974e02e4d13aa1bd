/**
 * checkpoints: before a file tool (any write-level tool that names its paths) changes a file, its previous
 * content is kept under `$KEEL_HOME/checkpoints/<session>/`, once per file per user turn. `/rewind` lists the
 * user turns and puts files, the conversation, or both back to before the chosen one.
 */
import path from 'node:path';
import { z } from 'zod';
import { definePlugin, errorMessage, Stage, type Kernel, type Session } from '../../kernel/index.js';
import { judgeByPolicy } from './policy.js';
import { describeOutcome, promptHash, promptLine, rewind, RewindError, type RewindOutcome, type RewindTarget, type SafeFilesLike } from './rewind.js';
import { CheckpointStore, DEFAULT_LIMITS, pruneSessions, type Limits } from './store.js';

const NAME = 'checkpoints';

export type CheckpointsOptions = Partial<Limits>;

declare module '../../kernel/types.js' {
  interface AgentEventMap {
    /** `/rewind` put files and/or the conversation back to before a user turn. */
    rewind: { sessionId: string; turn: number; restored: string[]; removed: string[]; conversation: boolean };
  }
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    checkpoints?: CheckpointsOptions;
  }
}

const configSchema = z
  .object({
    maxFileBytes: z.number().int().positive(),
    maxSessionBytes: z.number().int().positive(),
    maxSessions: z.number().int().positive(),
  })
  .partial()
  .strict();

/** Sessions whose `user_message` events are matched to them (events carry no session). */
const TRACKED = 32;

const BASH_NOTE = 'Only changes made by file tools (write_file, edit_file, notebook_edit) are tracked: what bash commands changed is not undone.';

interface SessionStoreLike {
  persist?(session: Session): void;
}

export default definePlugin((opts: CheckpointsOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { checkpoints: configSchema },
  apply(kernel) {
    const limits: Limits = { ...DEFAULT_LIMITS, ...kernel.config.checkpoints, ...opts };
    const root = () => (kernel.config.keelHome ? path.join(kernel.config.keelHome, 'checkpoints') : '');
    const tracked: Session[] = [];
    const storeOf = (session: Session) => session.data.get(NAME) as CheckpointStore | undefined;

    // LATE: the session store has settled the session's id (resume, fork) and loaded its history.
    kernel.hooks.sessionStart.tapPromise({ name: NAME, stage: Stage.LATE }, async (session) => {
      const dir = root();
      if (!dir) return;
      if (session.resumedFrom && session.resumedFrom !== session.id) CheckpointStore.copy(dir, session.resumedFrom, session.id);
      session.data.set(NAME, new CheckpointStore(dir, session.id, limits));
      tracked.push(session);
      if (tracked.length > TRACKED) tracked.shift();
      try {
        pruneSessions(dir, limits.maxSessions, session.id);
      } catch (err) {
        kernel.log('warn', `cannot prune old checkpoints in ${dir}: ${errorMessage(err)}`, NAME);
      }
    });

    let warned = false;
    kernel.hooks.event.tap(NAME, (event) => {
      if (event.type !== 'user_message') return;
      const session = tracked.findLast((s) => s.messages[s.messages.length - 1] === event.message);
      const store = session && storeOf(session);
      if (!session || !store) return;
      try {
        store.addTurn({ prompt: promptLine(event.message), messageIndex: session.messages.length - 1, promptHash: promptHash(event.message), at: new Date().toISOString() });
      } catch (err) {
        // Checkpoints are a convenience: a folder Keel cannot write stops them, not the run (said once).
        if (!warned) kernel.log('warn', `checkpoints: ${errorMessage(err)}; file changes are not checkpointed in this session`, NAME);
        warned = true;
      }
    });

    // EARLY: after the permission re-check, before any tap that runs the call.
    kernel.hooks.toolExecute.tapPromise({ name: NAME, stage: Stage.EARLY }, async (call, turn) => {
      const tool = kernel.tools.get(call.name);
      const store = storeOf(turn.session);
      const userTurn = store?.lastTurn();
      if (!tool || tool.permission !== 'write' || !tool.paths || !store || !userTurn) return undefined;
      const kept: string[] = [];
      try {
        for (const file of tool.paths(call.input)) {
          if (typeof file === 'string' && file) kept.push(store.snapshot(userTurn, path.resolve(turn.session.cwd, file)));
        }
      } catch (err) {
        kernel.log('warn', `checkpoint before ${call.name} failed: ${errorMessage(err)}; /rewind cannot restore this change`, NAME);
      }
      if (kept.length) snapshotted(turn.data).set(call.id, kept);
      return undefined;
    });

    // After the call: how Keel's own write left each file, so /rewind can tell changes made outside Keel since.
    // LAST: after the user's PostToolUse hooks (a formatter they run on each edit counts as part of Keel's write).
    kernel.hooks.toolResult.tapPromise({ name: NAME, stage: Stage.LAST }, async (result, call, turn) => {
      const files = snapshotted(turn.data).get(call.id);
      const store = storeOf(turn.session);
      if (!files || !store) return result;
      snapshotted(turn.data).delete(call.id);
      try {
        for (const file of files) store.noteWritten(file);
      } catch (err) {
        kernel.log('warn', `checkpoints: cannot note how ${call.name} left its files: ${errorMessage(err)}`, NAME);
      }
      return result;
    });

    kernel.commands.register({
      name: 'rewind',
      description: 'list user turns; /rewind <turn> [both|files|conversation] [--force] puts them back to before that turn',
      async run(args, ctx) {
        const store = storeOf(ctx.session);
        if (!store) throw new Error('checkpoints need $KEEL_HOME and a started session');
        const all = args.split(/\s+/).filter(Boolean);
        const force = all.includes('--force');
        const words = all.filter((w) => w !== '--force');
        if (words.length === 0) {
          if (force) throw new Error(`--force needs a turn number (${USAGE})`);
          return listTurns(store);
        }
        const n = Number(words[0]);
        if (!Number.isInteger(n) || n <= 0) throw new Error(`"${words[0]}" is not a turn number (${USAGE})`);
        const target = (words[1] ?? 'both') as RewindTarget;
        if (!['both', 'files', 'conversation'].includes(target) || words.length > 2) {
          throw new Error(`unknown target "${words.slice(1).join(' ')}" (${USAGE})`);
        }
        const files = kernel.services.get('safe-files') as Partial<SafeFilesLike> | undefined;
        if (target !== 'conversation' && (typeof files?.replace !== 'function' || typeof files.remove !== 'function' || typeof files.realTarget !== 'function')) {
          throw new Error('rewinding files needs the file tools (plugin tools-fs, which offers the safe-files service); only /rewind <turn> conversation works without them');
        }
        const announce = (outcome: RewindOutcome) => {
          if (outcome.conversation === 'rewound') persist(kernel, ctx.session);
          kernel.emit({ type: 'rewind', sessionId: ctx.session.id, turn: n, restored: outcome.restored, removed: outcome.removed, conversation: outcome.conversation === 'rewound' });
        };
        let outcome: RewindOutcome;
        try {
          outcome = await rewind(store, ctx.session, n, target, {
            files: files as SafeFilesLike,
            judge: (file, action) => judgeByPolicy(kernel, ctx.session, file, action, ctx.signal),
            force,
            cwd: ctx.session.cwd,
          });
        } catch (err) {
          // Some files were put back before others failed: said like a finished rewind's.
          if (err instanceof RewindError && err.outcome) announce(err.outcome);
          throw err;
        }
        announce(outcome);
        return describeOutcome(outcome, ctx.session.cwd, target);
      },
    });
  },
}));

const USAGE = 'usage: /rewind <turn> [both|files|conversation] [--force]';

/** Real paths each write call of a turn had checkpointed, by call id, until its result notes how it left them. */
function snapshotted(data: Map<string, unknown>): Map<string, string[]> {
  let map = data.get(NAME) as Map<string, string[]> | undefined;
  if (!map) {
    map = new Map();
    data.set(NAME, map);
  }
  return map;
}

function listTurns(store: CheckpointStore): string {
  const turns = store.index.turns;
  if (turns.length === 0) return `No user turns recorded in this session yet.\n${BASH_NOTE}`;
  const rows = turns.map((t) => {
    const when = t.at.slice(0, 16).replace('T', ' ');
    const files = t.files.length ? `  (${t.files.length} file${t.files.length === 1 ? '' : 's'} changed)` : '';
    return `  ${String(t.n).padStart(3)}  ${when}  ${t.prompt}${files}`;
  });
  return [
    'User turns of this session:',
    ...rows,
    'Rewind with /rewind <turn> [both|files|conversation] (default both): puts files and/or the conversation back to before that turn. Files changed outside Keel since its last write are listed and left alone unless you add --force.',
    BASH_NOTE,
  ].join('\n');
}

/** The rewritten history reaches the session file now, not at the next turn (a headless /rewind has none). */
function persist(kernel: Kernel, session: Session): void {
  kernel.state.set({ messages: session.messages.slice() });
  const store = kernel.services.get('session-store') as SessionStoreLike | undefined;
  store?.persist?.(session);
}
