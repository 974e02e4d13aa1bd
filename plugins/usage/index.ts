import { z } from 'zod';
import { addUsage, definePlugin, KeelError, type Kernel, type Session, type TokenUsage } from '../../kernel/index.js';
import { costOf, findPrice, windowOf, type ModelPrice } from './pricing.js';
import { costReport } from './report.js';
import { contextTokensOf, emptyBook, inheritedBook, record, type ModelTotals, type Tier, type UsageBook, type UsageTotals } from './totals.js';

export type { ModelPrice } from './pricing.js';
export type { ModelTotals, UsageBook, UsageTotals } from './totals.js';
export { BUILTIN_PRICES, costOf, findPrice } from './pricing.js';

/** What providers call after every model response. */
export interface UsageService {
  /** Adds one call to the session's and the process's totals and returns its cost in USD ($0 when unpriced). */
  record(entry: { session: Session; model: string; tier: Tier; usage: TokenUsage }): number;
  /** The cost of a call, or undefined when no price is known for the model. */
  cost(model: string, usage: TokenUsage): number | undefined;
  /** The model's context window in tokens (config `contextWindow` overrides the table). */
  contextWindow(model: string): number;
  /** The session's totals, per model and per tier. */
  totals(session: Session): UsageBook;
  /** The process's totals per model in Claude Code's result field `modelUsage` (camelCase, `costUSD`). */
  modelUsage(): Record<string, Record<string, number>>;
}

declare module '../../kernel/types.js' {
  interface Services {
    usage: UsageService;
  }
  interface AppState {
    /** Process-wide totals per model (set by the usage plugin). */
    usageByModel?: Record<string, ModelTotals>;
    /** Process-wide totals of the main loop and of auxiliary (small-model) calls, kept apart. */
    usageByTier?: Record<Tier, UsageTotals>;
  }
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** USD per million tokens, by model id or id prefix; adds to and overrides the built-in table. */
    pricing?: Record<string, ModelPrice>;
  }
}

const price = z.number().nonnegative();
const pricingConfig = z.record(
  z.string().min(1),
  z.object({ input: price, output: price, cacheWrite: price.optional(), cacheRead: price.optional() }).strict(),
);

const NAME = 'usage';

/** Token and cost accounting: per session and per model, the `/cost` command, and the context-window gauge. */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { pricing: pricingConfig },
  apply(kernel) {
    const pricing = parsePricing(kernel.config.pricing);
    const windowFor = (model: string) => kernel.config.contextWindow ?? windowOf(model);
    const warned = new Set<string>();
    let processBook = emptyBook();

    const bookOf = (session: Session): UsageBook => {
      let book = session.data.get(NAME) as UsageBook | undefined;
      if (!book) {
        book = emptyBook();
        session.data.set(NAME, book);
      }
      return book;
    };

    const service: UsageService = {
      record({ session, model, tier, usage }) {
        const found = findPrice(model, pricing);
        if (!found && !warned.has(model)) {
          warned.add(model);
          kernel.log('warn', `no price known for model "${model}": its cost is reported as $0; set it under \`pricing\` in agent.config.ts (USD per million tokens)`, NAME);
        }
        const costUsd = found ? costOf(found, usage) : 0;
        const entry = { model, tier, usage, costUsd, priced: Boolean(found) };
        session.data.set(NAME, record(bookOf(session), entry));
        processBook = record(processBook, entry);
        kernel.state.set((state) => ({
          tokenUsage: addUsage(state.tokenUsage, usage),
          cost: state.cost + costUsd,
          usageByModel: processBook.byModel,
          usageByTier: processBook.byTier,
          ...(tier === 'main' ? { contextTokens: contextTokensOf(usage), contextWindow: windowFor(model) } : {}),
        }));
        return costUsd;
      },
      cost(model, usage) {
        const found = findPrice(model, pricing);
        return found ? costOf(found, usage) : undefined;
      },
      contextWindow: windowFor,
      totals: bookOf,
      modelUsage() {
        const out: Record<string, Record<string, number>> = {};
        for (const [model, t] of Object.entries(processBook.byModel)) {
          out[model] = {
            inputTokens: t.usage.input_tokens,
            outputTokens: t.usage.output_tokens,
            cacheReadInputTokens: t.usage.cache_read_input_tokens,
            cacheCreationInputTokens: t.usage.cache_creation_input_tokens,
            webSearchRequests: 0,
            costUSD: t.costUsd,
            contextWindow: windowFor(model),
            maxOutputTokens: kernel.config.maxTokens,
          };
        }
        return out;
      },
    };
    kernel.services.provide('usage', service);

    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      // The session store (EARLY) has set what a resumed or forked session carries from its file.
      const inherited = session.inherited && !session.data.has(NAME) ? session.inherited : undefined;
      if (inherited) session.data.set(NAME, inheritedBook(inherited));
      bookOf(session);
      kernel.state.set({ contextWindow: windowFor(session.model) });
      // A resumed (or forked) session starts from what it had spent, as /cost does, not from $0.
      if (inherited) {
        kernel.state.set((state) => ({ cost: state.cost + inherited.costUsd, tokenUsage: addUsage(state.tokenUsage, inherited.usage ?? {}) }));
      }
    });

    kernel.commands.register({
      name: 'cost',
      description: 'show the tokens and dollars this session has spent, per model, and the context-window use',
      async run(_args, ctx) {
        return costReport(bookOf(ctx.session), contextOf(kernel));
      },
    });
  },
}));

function parsePricing(value: unknown): Record<string, ModelPrice> {
  const parsed = pricingConfig.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new KeelError(`config pricing.${issue.path.map(String).join('.')}: ${issue.message}`, { code: 'config', exitCode: 2 });
}

function contextOf(kernel: Kernel): { tokens: number; window: number } {
  const state = kernel.state.get();
  return { tokens: state.contextTokens, window: state.contextWindow };
}
