/**
 * `--max-budget-usd`: no model request starts once the session's cost has reached the budget; the run then ends
 * with Claude Code's `error_max_budget_usd`. The cost is the session's (earlier `--continue`d runs included) plus
 * what its sub-agents spent; a sub-agent gets what is left as its own budget (tool-agent's handoff asks the
 * `cost-budget` service).
 */
import { z } from 'zod';
import { definePlugin, KeelError, Stage, type Kernel, type Session } from '../../kernel/index.js';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** The most this session may spend on model calls, in USD (`--max-budget-usd`). */
    maxBudgetUsd?: number;
  }
}

export interface CostBudgetService {
  /** The budget left for the session (never below 0), or undefined when there is no budget. */
  remaining(session: Session): number | undefined;
}

declare module '../../kernel/types.js' {
  interface Services {
    'cost-budget': CostBudgetService;
  }
}

const NAME = 'budget';

/** What the session has spent: earlier runs (resume, fork) plus every call of this process, sub-agents included. */
export function spentBy(kernel: Kernel, session: Session): number {
  return (session.inherited?.costUsd ?? 0) + kernel.state.get().cost;
}

/** Thrown before a request the budget does not allow; the loop ends the run with its `runSubtype`. */
export class BudgetSpentError extends KeelError {
  readonly runSubtype = 'error_max_budget_usd';
  constructor(spent: number, budget: number) {
    super(`the session has spent $${spent.toFixed(4)}, which reached its budget of $${budget} (--max-budget-usd / maxBudgetUsd): no further model request is made`, { code: 'budget' });
  }
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { maxBudgetUsd: z.number().positive().finite() },
  apply(kernel) {
    const budget = kernel.config.maxBudgetUsd;
    kernel.services.provide('cost-budget', {
      remaining: (session) => (budget === undefined ? undefined : Math.max(0, budget - spentBy(kernel, session))),
    });
    if (budget === undefined) return;
    const limit = budget;
    // Before every other tap (a fallback model's retry goes through here again): no request starts over budget.
    kernel.hooks.query.tapPromise({ name: NAME, stage: Stage.FIRST }, async (_request, turn) => {
      const spent = spentBy(kernel, turn.session);
      if (spent >= limit) throw new BudgetSpentError(spent, limit);
      return undefined;
    });
  },
}));
