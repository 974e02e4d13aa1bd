/** A sub-agent's share of the run's remaining model turns (`maxTurns`), taken before it starts. */
import { canonicalToolName, type ToolContext } from '../../kernel/index.js';

export interface TurnShare {
  /** Turns the child may take (0: none left). */
  turns: number;
  /** Why there are none, when `turns` is 0. */
  why: string;
  /** Charges what the child used and gives the rest back to the run. */
  settle(used: number): void;
}

const STARTED = 'tool-agent:started';

/**
 * The run keeps one turn for itself, to read what its sub-agents found; the rest is split evenly between the
 * agent calls of this response that have not started yet, so parallel sub-agents together stay within the limit.
 */
export function shareOfTurns(ctx: ToolContext, fallbackMax: number): TurnShare {
  const allowance = ctx.turn.turns;
  if (!allowance) return { turns: fallbackMax, why: '', settle: () => undefined };
  const started = (ctx.turn.data.get(STARTED) as number | undefined) ?? 0;
  ctx.turn.data.set(STARTED, started + 1);
  const pending = Math.max(1, agentCallsInResponse(ctx) - started);
  const available = allowance.left() - 1;
  const wanted = Math.floor(available / pending);
  if (wanted < 1) {
    return {
      turns: 0,
      why: `no model turns are left for a sub-agent under this run's limit of ${allowance.max} turns (--max-turns / maxTurns; sub-agents' turns count against it)`,
      settle: () => undefined,
    };
  }
  const taken = allowance.take(wanted);
  let settled = false;
  return {
    turns: taken,
    why: '',
    settle(used) {
      if (settled) return;
      settled = true;
      allowance.giveBack(Math.max(0, taken - Math.max(0, used)));
    },
  };
}

/** How many agent calls the response being answered holds (they run in parallel). */
function agentCallsInResponse(ctx: ToolContext): number {
  const messages = ctx.session.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    const calls = message.content.filter((block) => block.type === 'tool_use' && canonicalToolName(block.name) === 'agent');
    if (calls.some((block) => block.type === 'tool_use' && block.id === ctx.call.id)) return calls.length;
    break;
  }
  return 1;
}
