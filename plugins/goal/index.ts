/**
 * Goals: `--goal <condition>` (with `-p`) or `/goal <condition>` keeps a run going until the condition holds.
 * After each turn that would end the run, the check command (`--goal-check`, run through the permission policy)
 * and then the small model judge the transcript; while the goal is not met the model is told what is missing and
 * goes on, within `--max-turns` and `--max-budget-usd`. The result's `goal` field says whether it was met.
 */
import { z } from 'zod';
import { definePlugin, userMessage, type RunResult, type Session } from '../../kernel/index.js';
import { runCheck } from './check.js';
import { judge } from './judge.js';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Keep working until this condition holds (`--goal`). */
    goal?: string;
    /** A command whose exit code 0 is part of the goal (`--goal-check "npm test"`). */
    goalCheck?: string;
  }
}

const NAME = 'goal';

/** The subtype an error asks the run to end with (the budget's `runSubtype`), if any. */
function runSubtypeOf(err: unknown): RunResult['subtype'] | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const subtype = (e as { runSubtype?: unknown }).runSubtype;
    if (typeof subtype === 'string') return subtype as RunResult['subtype'];
  }
  return undefined;
}

interface Goal {
  condition: string;
  check?: string;
  checks: number;
  met: boolean;
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['query-service'],
  config: { goal: z.string().trim().min(1), goalCheck: z.string().trim().min(1) },
  apply(kernel) {
    const goalOf = (session: Session): Goal | undefined => {
      if (!session.data.has(NAME) && kernel.config.goal) session.data.set(NAME, { condition: kernel.config.goal, check: kernel.config.goalCheck, checks: 0, met: false });
      return session.data.get(NAME) as Goal | undefined;
    };

    kernel.commands.register({
      name: 'goal',
      description: 'keep working until a condition holds: /goal <condition> (no condition: show it; /goal clear: drop it)',
      async run(args, ctx) {
        const text = args.trim();
        if (!text) {
          const goal = goalOf(ctx.session);
          return goal ? `Goal: ${goal.condition}${goal.check ? ` (check: ${goal.check})` : ''} — ${goal.met ? 'met' : 'not met yet'}` : 'No goal set. /goal <condition> sets one.';
        }
        if (text === 'clear') {
          ctx.session.data.delete(NAME);
          return 'Goal cleared.';
        }
        ctx.session.data.set(NAME, { condition: text, check: kernel.config.goalCheck, checks: 0, met: false });
        return `Goal set: ${text}. Each answer is checked against it; work continues until it holds.`;
      },
    });

    kernel.hooks.postTurn.tapPromise(NAME, async (record, turn) => {
      const goal = goalOf(turn.session);
      if (!goal || goal.met) return;
      const calledTools = record.response.content.some((block) => block.type === 'tool_use');
      if (calledTools || record.followUp || record.end || record.response.stopReason === 'max_tokens' || turn.signal.aborted) return;
      goal.checks++;
      let missing: string | undefined;
      if (goal.check) {
        const outcome = await runCheck(turn, goal.check);
        if (!outcome.ran) {
          record.end = { subtype: 'error_during_execution', error: `--goal-check "${goal.check}": ${outcome.why}` };
          record.fields = { goal: { condition: goal.condition, met: false, checks: goal.checks } };
          return;
        }
        if (outcome.exitCode !== 0) missing = `the check command \`${goal.check}\` exited with ${outcome.exitCode}:\n${outcome.output}`;
      }
      if (!missing) {
        try {
          const verdict = await judge(turn, goal.condition, goal.check);
          if (!verdict.met) missing = verdict.reason || 'the judge found it not met';
        } catch (err) {
          // A judge that cannot answer (the budget is spent, the small model is down) ends the run unmet.
          const subtype = runSubtypeOf(err);
          record.end = subtype ? { subtype, error: userMessage(err) } : { subtype: 'error_during_execution', error: `goal check failed: ${userMessage(err)}` };
          record.fields = { goal: { condition: goal.condition, met: false, checks: goal.checks } };
          return;
        }
      }
      goal.met = missing === undefined;
      record.fields = { goal: { condition: goal.condition, met: goal.met, checks: goal.checks } };
      if (missing !== undefined) {
        kernel.log('info', `goal not met yet: ${missing.split('\n')[0]}`, NAME);
        record.followUp = { role: 'user', content: `The goal is not met yet: ${missing}\n\nKeep working until this holds: ${goal.condition}` };
      }
    });
  },
}));
