import { definePlugin, Stage, type Kernel, type MessageParam, type Session } from '../../kernel/index.js';
import { snipMessages } from './snip.js';

export interface SnipPluginOptions {
  /** Snip when the context uses this share of the window (default 0.98). */
  ratio?: number;
  /** Turns kept at the end (default 8). */
  keepTurns?: number;
  /** Snip aims to bring the context under this share of the window (default 0.6). */
  targetRatio?: number;
}

export interface SnipResult {
  removed: number;
  preTokens: number;
  postTokens: number;
}

export interface SnipService {
  /** Drops the oldest turns now, rewrites `session.messages`, emits `compact`. Null when nothing could go. */
  snip(session: Session, opts?: { trigger?: 'auto' | 'overflow' | 'snip' | 'manual'; keepTurns?: number }): SnipResult | null;
}

declare module '../../kernel/types.js' {
  interface Services {
    snip: SnipService;
  }
}

/** The part of the `budget` service (context-budget) this plugin uses. */
interface Budget {
  window(session: Session): number;
  used(session: Session): number;
  project(session: Session, messages: readonly MessageParam[]): number;
  publish(session: Session): unknown;
}

const NAME = 'compact-snip';

/** The free tier: drops the oldest turns when the context is nearly full, and backs up AutoCompact. */
export default definePlugin((opts: SnipPluginOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['context-budget'],
  apply(kernel) {
    const ratio = opts.ratio ?? 0.98;
    const service = createSnip(kernel, { keepTurns: opts.keepTurns ?? 8, targetRatio: opts.targetRatio ?? 0.6 });
    kernel.services.provide('snip', service);
    // After AutoCompact had its chance (it taps postTurn at the normal stage).
    kernel.hooks.postTurn.tapPromise({ name: NAME, stage: Stage.LATE }, async (_record, turn) => {
      const budget = kernel.services.get('budget') as Budget | undefined;
      if (!budget) return;
      const session = turn.session;
      if (budget.used(session) >= budget.window(session) * ratio) service.snip(session, { trigger: 'snip' });
    });
  },
}));

function createSnip(kernel: Kernel, defaults: { keepTurns: number; targetRatio: number }): SnipService {
  return {
    snip(session, opts = {}) {
      const budget = kernel.services.get('budget') as Budget | undefined;
      const target = budget ? budget.window(session) * defaults.targetRatio : undefined;
      const preTokens = budget?.used(session) ?? 0;
      const plan = snipMessages(session.messages, {
        keepTurns: opts.keepTurns ?? defaults.keepTurns,
        fits: budget && target !== undefined ? (messages) => budget.project(session, messages) <= target : undefined,
      });
      if (!plan) return null;
      session.messages.splice(0, session.messages.length, ...plan.messages);
      kernel.state.set({ messages: session.messages.slice() });
      budget?.publish(session);
      const postTokens = budget?.used(session) ?? 0;
      kernel.emit({ type: 'compact', trigger: opts.trigger ?? 'snip', preTokens, postTokens, tier: NAME });
      return { removed: plan.removed, preTokens, postTokens };
    },
  };
}
