/**
 * Plan mode: with the permission mode `plan` only read-level tools run (the permission policy refuses the
 * rest); the model explores, then hands its plan to `exit_plan_mode`, which asks the user to approve it and
 * switch to `edits`, or to stay in plan mode. A run that cannot ask (headless) ends with the plan as its result.
 */
import { z } from 'zod';
import { definePlugin, defineTool, type PermissionMode, type Session, type ToolResult, type Turn } from '../../kernel/index.js';

const NAME = 'plan-mode';

declare module '../../kernel/types.js' {
  interface AgentEventMap {
    /** The session's permission mode changed (plan approved, /plan). */
    permission_mode: { sessionId: string; from: PermissionMode; to: PermissionMode; reason: string };
  }
}

/** The mode a session was in before `/plan`, to go back to with `/plan off`. */
const PREVIOUS = `${NAME}:previous`;

const input = z.object({
  plan: z.string().min(1).describe('The plan, in markdown: the steps, the files to change and how to check the result'),
});

const PLAN_SECTION =
  'Plan mode is on: only read-level tools run (read, search, list, fetch docs); anything that writes, runs commands or uses the network is refused. Explore as much as you need, then call exit_plan_mode with a concrete plan (steps, files to change, how to verify). Do not change anything before the user approves the plan.';

export function setMode(session: Session, emit: Turn['emit'], to: PermissionMode, reason: string): void {
  const from = session.permissionMode;
  if (from === to) return;
  session.permissionMode = to;
  emit({ type: 'permission_mode', sessionId: session.id, from, to, reason });
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['permissions'],
  apply(kernel) {
    kernel.tools.register(
      defineTool({
        name: 'exit_plan_mode',
        description:
          'In plan mode, present your plan to the user for approval. If approved, the permission mode becomes edits and you carry the plan out; if not, keep planning with their feedback. Call it only when the plan is ready, and only in plan mode.',
        permission: 'read',
        input,
        async execute(args, ctx): Promise<ToolResult> {
          const { session, turn } = ctx;
          if (session.permissionMode !== 'plan') {
            return { content: `exit_plan_mode: the permission mode is ${session.permissionMode}, not plan; go ahead without it.`, isError: true };
          }
          const answer = await kernel.hooks.askUser.promise(
            {
              kind: 'permission',
              call: ctx.call,
              tool: kernel.tools.get('exit_plan_mode'),
              reason: 'Approve this plan? Allowing switches to edits mode (file edits run without asking) and the agent starts; denying keeps planning.',
              preview: args.plan,
              options: ['allow_once', 'deny'],
            },
            turn,
          );
          if (!answer || answer.kind !== 'permission') {
            return {
              content: 'This run cannot ask the user to approve a plan, so the plan is the result of this run, which ends here.',
              endRun: { result: args.plan },
              display: { plan: args.plan, approved: false },
            };
          }
          if (answer.choice === 'allow_once' || answer.choice === 'allow_session') {
            setMode(session, ctx.emit, 'edits', 'plan approved');
            return { content: 'The user approved the plan. The permission mode is now edits: carry the plan out, step by step.', display: { plan: args.plan, approved: true } };
          }
          const feedback = answer.message ? ` Their feedback: ${answer.message}` : '';
          return { content: `The user did not approve the plan; plan mode stays on.${feedback} Revise the plan (ask if something is unclear) and call exit_plan_mode again.`, display: { plan: args.plan, approved: false } };
        },
      }),
    );

    // Sent only while planning: outside plan mode the tool has nothing to do.
    kernel.hooks.selectTools.tapPromise(NAME, async (tools, turn) =>
      turn.session.permissionMode === 'plan' ? tools : tools.filter((t) => t.name !== 'exit_plan_mode'),
    );

    kernel.hooks.contextLoad.tapPromise(NAME, async (context, turn) => {
      if (turn.session.permissionMode !== 'plan') return context;
      return { ...context, system: [...context.system, { type: 'text', text: PLAN_SECTION }] };
    });

    kernel.commands.register({
      name: 'plan',
      description: 'enter plan mode (only read-level tools run until you approve a plan); /plan off goes back',
      async run(args, ctx) {
        const word = args.trim();
        const session = ctx.session;
        const emit = (event: Parameters<Turn['emit']>[0]) => kernel.emit(event);
        if (word === '' || word === 'on') {
          if (session.permissionMode === 'plan') return 'Plan mode is already on.';
          session.data.set(PREVIOUS, session.permissionMode);
          setMode(session, emit, 'plan', '/plan');
          return 'Plan mode is on: only read-level tools run until you approve a plan.';
        }
        if (word === 'off') {
          if (session.permissionMode !== 'plan') return `Plan mode is not on (the mode is ${session.permissionMode}).`;
          const back = (session.data.get(PREVIOUS) as PermissionMode | undefined) ?? (kernel.config.permissionMode === 'plan' ? 'ask' : kernel.config.permissionMode);
          setMode(session, emit, back, '/plan off');
          return `Plan mode is off; the permission mode is ${back}.`;
        }
        throw new Error(`unknown argument "${word}" (usage: /plan, or /plan off)`);
      },
    });
  },
}));
