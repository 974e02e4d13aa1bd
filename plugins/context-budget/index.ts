import { definePlugin, Stage, type Kernel, type MessageParam, type Session, type TurnRecord } from '../../kernel/index.js';
import { estimateMessage, estimateMessages, estimateText } from './estimate.js';
import { windowFor } from './windows.js';

/** What the status line reads: the live context against the model's window. */
export interface ContextBudgetState {
  window: number;
  used: number;
  /** Room left before the window, less the output reserve. */
  remaining: number;
  /** used / window. */
  ratio: number;
  /** True when `used` is only an estimate (no API usage since the history was last rewritten). */
  estimated: boolean;
}

export interface BudgetService {
  window(session: Session): number;
  /** Tokens the live context uses: the last response's usage plus an estimate of what was added since. */
  used(session: Session): number;
  remaining(session: Session): number;
  /** Output tokens kept free below the window. */
  reserve(): number;
  /** Tokens a context with these messages would use (system prompt and tools included). */
  project(session: Session, messages: readonly MessageParam[]): number;
  estimateMessages(messages: readonly MessageParam[]): number;
  estimateText(text: string): number;
  /** Recomputes and publishes to `kernel.state.contextBudget` (call after rewriting the history). */
  publish(session: Session): ContextBudgetState;
}

declare module '../../kernel/types.js' {
  interface AppState {
    contextBudget?: ContextBudgetState;
  }
  interface Services {
    budget: BudgetService;
  }
}

const NAME = 'context-budget';
/** The output reserve never counts more than this, even with a large `maxTokens`. */
const MAX_RESERVE = 20_000;

/** Where the API last measured the context. Valid while the history up to it is untouched (appends only). */
interface Anchor {
  index: number;
  message: MessageParam;
  first: MessageParam;
  tokens: number;
}

interface BudgetData {
  anchor?: Anchor;
  /** System prompt and tool schemas: what the API counted beyond the messages. */
  overhead: number;
  /** The messages of the last request and the running estimate after each (see estimateSent). */
  sent?: { messages: MessageParam[]; totals: number[] };
}

/**
 * The estimate of a request's messages, asked after every turn: a request's messages are the previous one's plus
 * the turn's, so only those are estimated; the sum over the shared prefix (the same message objects) is kept. The
 * prefix is compared by identity alone, as the anchor is: reading every message's content to catch one edited in
 * place (history messages are replaced, not edited) cost a cache miss per message per turn, for an estimate the
 * next response's usage corrects anyway (`overhead`).
 */
function estimateSent(b: BudgetData, messages: readonly MessageParam[]): number {
  const sent = (b.sent ??= { messages: [], totals: [] });
  let k = 0;
  const n = Math.min(sent.messages.length, messages.length);
  while (k < n && sent.messages[k] === messages[k]) k++;
  sent.messages.length = sent.totals.length = k;
  for (let i = k; i < messages.length; i++) {
    const message = messages[i]!;
    sent.messages.push(message);
    sent.totals.push((i > 0 ? sent.totals[i - 1]! : 0) + estimateMessage(message));
  }
  return messages.length > 0 ? sent.totals[messages.length - 1]! : 0;
}

function data(session: Session): BudgetData {
  let value = session.data.get(NAME) as BudgetData | undefined;
  if (!value) {
    value = { overhead: 0 };
    session.data.set(NAME, value);
  }
  return value;
}

/** Knows each model's window, tracks usage from the API plus an estimate, publishes used / remaining. */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    const service = createBudget(kernel);
    kernel.services.provide('budget', service);

    // A resumed session's context is estimated at once, so the footer does not say 0 % until the first answer.
    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      if (session.messages.length === 0) return;
      kernel.state.set({ contextTokens: service.used(session) });
    });

    kernel.hooks.postTurn.tapPromise({ name: NAME, stage: Stage.EARLY }, async (record, turn) => {
      measure(turn.session, record);
      service.publish(turn.session);
    });

    kernel.hooks.contextLoad.tapPromise({ name: NAME, stage: Stage.LAST }, async (context, turn) => {
      // Before the first response the overhead is unknown: count the system prompt built so far.
      const b = data(turn.session);
      if (!b.anchor) b.overhead = Math.max(b.overhead, context.system.reduce((sum, block) => sum + estimateText(block.text), 0));
      const state = service.publish(turn.session);
      return { ...context, budget: { ...context.budget, window: state.window, used: state.used } };
    });
  },
}));

function measure(session: Session, record: TurnRecord): void {
  const usage = record.response.usage;
  const prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  const messages = session.messages;
  const at = messages.length - 1 - (record.toolResults.length > 0 ? 1 : 0);
  const message = messages[at];
  const b = data(session);
  b.overhead = Math.max(0, prompt - estimateSent(b, record.request.messages));
  if (message && message.role === 'assistant') b.anchor = { index: at, message, first: messages[0]!, tokens: prompt + usage.output_tokens };
}

function createBudget(kernel: Kernel): BudgetService {
  const reserve = () => Math.min(kernel.config.maxTokens, MAX_RESERVE);
  const window = (session: Session): number => {
    const configured = kernel.config.contextWindow;
    if (typeof configured === 'number' && configured > 0) return configured;
    const published = kernel.state.get().contextWindow;
    return published > 0 ? published : windowFor(session.model);
  };
  const measured = (session: Session): { used: number; estimated: boolean } => {
    const b = data(session);
    const messages = session.messages;
    const anchor = b.anchor;
    if (anchor && messages[anchor.index] === anchor.message && messages[0] === anchor.first) {
      return { used: anchor.tokens + estimateMessages(messages.slice(anchor.index + 1)), estimated: false };
    }
    return { used: b.overhead + estimateMessages(messages), estimated: true };
  };
  const service: BudgetService = {
    window,
    used: (session) => measured(session).used,
    remaining: (session) => window(session) - measured(session).used - reserve(),
    reserve,
    project: (session, messages) => data(session).overhead + estimateMessages(messages),
    estimateMessages,
    estimateText,
    publish(session) {
      const w = window(session);
      const { used, estimated } = measured(session);
      const state: ContextBudgetState = { window: w, used, remaining: w - used - reserve(), ratio: w > 0 ? used / w : 0, estimated };
      kernel.state.set({ contextBudget: state });
      return state;
    },
  };
  return service;
}
