import { z } from 'zod';
import { definePlugin, errorMessage, type Compactor, type ContentBlockParam, type Kernel, type MessageParam, type Session } from '../../kernel/index.js';
import { latestRequest, splitHistory, summaryHead } from './history.js';
import { summarize, SummaryError } from './summarize.js';

export interface AutoCompactSettings {
  /** Compact when fewer than this many tokens remain (default 13 000; at most a quarter of the window). */
  bufferTokens: number;
  /** Longest acceptable summary in tokens (default 20 000); a longer one is a failure. */
  maxSummaryTokens: number;
  /** Recent turns kept verbatim (default 6), fewer when they take more than `keepRatio` of the window. */
  keepTurns: number;
  keepRatio: number;
  /** Consecutive failed summaries before the breaker trips and snip takes over (default 3). */
  maxFailures: number;
  /** Characters of transcript sent to the small model (default 400 000). */
  transcriptChars: number;
}

export type AutoCompactOptions = Partial<AutoCompactSettings> & { enabled?: boolean };

export interface SummarizerService {
  /** A five-section summary of `messages` from the small model; throws when it fails or is too long. */
  summarize(session: Session, messages: readonly MessageParam[], opts?: { instructions?: string; signal?: AbortSignal }): Promise<string>;
  /**
   * The first blocks of the message that replaces `older`: the summary (introduced by `intro`), then the
   * user's latest request verbatim when it is in `older`. Later compactions recognise this head.
   */
  head(summary: string, older: readonly MessageParam[], intro: string): ContentBlockParam[];
}

declare module '../../kernel/types.js' {
  interface Services {
    summarizer: SummarizerService;
  }
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    autoCompact?: AutoCompactOptions;
  }
}

/** The parts of other plugins' services this plugin uses (found by name, never imported). */
interface Budget {
  window(session: Session): number;
  used(session: Session): number;
  remaining(session: Session): number;
  estimateMessages(messages: readonly MessageParam[]): number;
  publish(session: Session): unknown;
}
interface Snip {
  snip(session: Session, opts?: { trigger?: 'auto' | 'overflow' | 'snip' | 'manual' }): unknown;
}
interface FullCompaction {
  compact(session: Session, opts: { instructions?: string; signal?: AbortSignal }): Promise<boolean>;
}

const NAME = 'compact-auto';

const configSchema = z
  .object({
    enabled: z.boolean(),
    bufferTokens: z.number().int().positive(),
    maxSummaryTokens: z.number().int().positive(),
    keepTurns: z.number().int().nonnegative(),
    keepRatio: z.number().min(0).max(1),
    maxFailures: z.number().int().positive(),
    transcriptChars: z.number().int().positive(),
  })
  .partial()
  .strict();

interface AutoData {
  failures: number;
  tripped: boolean;
  busy: boolean;
}

function data(session: Session): AutoData {
  let value = session.data.get(NAME) as AutoData | undefined;
  if (!value) {
    value = { failures: 0, tripped: false, busy: false };
    session.data.set(NAME, value);
  }
  return value;
}

/**
 * AutoCompact: when the context runs low, the small model summarises the older history into five sections and
 * recent turns stay. Provides the `compaction` service the loop calls on overflow, and the `summarizer`.
 */
export default definePlugin((opts: AutoCompactOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['context-budget', 'query-service'],
  config: { autoCompact: configSchema },
  apply(kernel) {
    const settings = (): AutoCompactSettings & { enabled: boolean } => {
      const fromConfig = (kernel.config.autoCompact ?? {}) as AutoCompactOptions;
      return {
        enabled: true,
        bufferTokens: 13_000,
        maxSummaryTokens: 20_000,
        keepTurns: 6,
        keepRatio: 0.25,
        maxFailures: 3,
        transcriptChars: 400_000,
        ...defined(fromConfig),
        ...defined(opts),
      };
    };
    const budget = () => kernel.services.require('budget', NAME) as Budget;

    const summarizer: SummarizerService = {
      summarize: (session, messages, o = {}) => {
        const s = settings();
        return summarize(kernel, session, messages, { ...o, maxTokens: s.maxSummaryTokens, transcriptChars: s.transcriptChars });
      },
      head: (summary, older, intro) => summaryHead(summary, latestRequest(older), intro),
    };
    kernel.services.provide('summarizer', summarizer);

    const compactor: Compactor = {
      async compact(session, o) {
        if (o.trigger === 'manual') {
          const full = kernel.services.get('full-compaction') as FullCompaction | undefined;
          if (full) return full.compact(session, { instructions: o.instructions, signal: o.signal });
        }
        const state = data(session);
        if (state.busy) return false;
        kernel.emit({ type: 'compact_start', session, trigger: o.trigger, instructions: o.instructions });
        state.busy = true;
        try {
          return await autoCompact(kernel, session, o, settings(), budget(), summarizer);
        } finally {
          state.busy = false;
        }
      },
    };
    kernel.services.provide('compaction', compactor);

    kernel.hooks.postTurn.tapPromise(NAME, async (_record, turn) => {
      const s = settings();
      if (!s.enabled) return;
      const session = turn.session;
      const b = budget();
      if (b.remaining(session) >= Math.min(s.bufferTokens, Math.floor(b.window(session) / 4))) return;
      await compactor.compact(session, { trigger: 'auto', signal: turn.signal });
    });
  },
}));

/** Drops keys set to undefined, so they do not override defaults. */
function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

async function autoCompact(
  kernel: Kernel,
  session: Session,
  opts: Parameters<Compactor['compact']>[1],
  s: AutoCompactSettings,
  budget: Budget,
  summarizer: SummarizerService,
): Promise<boolean> {
  const state = data(session);
  const snip = (): boolean => {
    const service = kernel.services.get('snip') as Snip | undefined;
    return Boolean(service?.snip(session, { trigger: opts.trigger }));
  };
  if (state.tripped) return snip();
  const keepTokens = budget.window(session) * s.keepRatio;
  const split = splitHistory(session.messages, s.keepTurns, (tail) => budget.estimateMessages(tail) <= keepTokens);
  if (!split) return snip();
  const preTokens = budget.used(session);
  let summary: string;
  try {
    summary = await summarizer.summarize(session, split.older, { instructions: opts.instructions, signal: opts.signal });
  } catch (err) {
    if (!(err instanceof SummaryError) || opts.signal?.aborted) throw err;
    state.failures++;
    if (state.failures >= s.maxFailures) {
      state.tripped = true;
      kernel.log('warn', `AutoCompact failed ${state.failures} times in a row (${errorMessage(err)}); snip takes over for this session`, NAME);
      return snip();
    }
    kernel.log('warn', `AutoCompact failed (${state.failures} of ${s.maxFailures}): ${errorMessage(err)}`, NAME);
    // On overflow the loop cannot go on without room: free it the cheap way now.
    return opts.trigger === 'overflow' ? snip() : false;
  }
  state.failures = 0;
  const head = summaryHead(summary, split.latestRequest, 'that was compacted to fit the context window. Summary of the earlier part');
  const rewritten: MessageParam[] = [{ role: 'user', content: head }, ...split.tail];
  session.messages.splice(0, session.messages.length, ...rewritten);
  kernel.state.set({ messages: session.messages.slice() });
  budget.publish(session);
  kernel.emit({ type: 'compact', trigger: opts.trigger, preTokens, postTokens: budget.used(session), tier: NAME });
  return true;
}
