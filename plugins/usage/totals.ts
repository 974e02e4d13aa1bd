/** Running totals of token use and cost: per session (in `session.data`) and per process (in `kernel.state`). */
import { addUsage, emptyUsage, type InheritedUsage, type TokenUsage } from '../../kernel/index.js';

export type Tier = 'main' | 'small';

export interface UsageTotals {
  usage: TokenUsage;
  costUsd: number;
  calls: number;
}

export interface ModelTotals extends UsageTotals {
  /** Tiers this model answered for. */
  tiers: Tier[];
  /** False when no price is known for the model (its calls count as $0). */
  priced: boolean;
}

export interface UsageBook {
  /** Everything this session spent, earlier runs included. */
  total: UsageTotals;
  /** What earlier runs (resume) or the parent session (fork) spent, already counted in `total`. */
  inherited?: InheritedUsage;
  byModel: Record<string, ModelTotals>;
  byTier: Record<Tier, UsageTotals>;
}

export const emptyTotals = (): UsageTotals => ({ usage: emptyUsage(), costUsd: 0, calls: 0 });

export const emptyBook = (): UsageBook => ({ total: emptyTotals(), byModel: {}, byTier: { main: emptyTotals(), small: emptyTotals() } });

function add(totals: UsageTotals, usage: TokenUsage, costUsd: number): UsageTotals {
  return { usage: addUsage(totals.usage, usage), costUsd: totals.costUsd + costUsd, calls: totals.calls + 1 };
}

/** The book a resumed or forked session starts from: the totals its file carried. */
export function inheritedBook(inherited: InheritedUsage): UsageBook {
  return { ...emptyBook(), total: { usage: inherited.usage ?? emptyUsage(), costUsd: inherited.costUsd, calls: inherited.calls ?? 0 }, inherited };
}

/** A new book with one call added (books are replaced, never mutated, so state snapshots stay intact). */
export function record(book: UsageBook, entry: { model: string; tier: Tier; usage: TokenUsage; costUsd: number; priced: boolean }): UsageBook {
  const prev = book.byModel[entry.model] ?? { ...emptyTotals(), tiers: [], priced: entry.priced };
  const model: ModelTotals = {
    ...add(prev, entry.usage, entry.costUsd),
    tiers: prev.tiers.includes(entry.tier) ? prev.tiers : [...prev.tiers, entry.tier],
    priced: prev.priced && entry.priced,
  };
  return {
    ...book,
    total: add(book.total, entry.usage, entry.costUsd),
    byModel: { ...book.byModel, [entry.model]: model },
    byTier: { ...book.byTier, [entry.tier]: add(book.byTier[entry.tier], entry.usage, entry.costUsd) },
  };
}

/** Tokens the live context used on a response: everything sent plus what came back. */
export function contextTokensOf(usage: TokenUsage): number {
  return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.output_tokens;
}
