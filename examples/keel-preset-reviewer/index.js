import { definePlugin, definePreset, Stage } from 'keel';
import { allowed, BRIEF, refusal } from './policy.js';

/**
 * The reviewer policy: only read-level tools reach the model, any other call is refused before the permission
 * policy is asked (so no mode or allow rule can let a write through), and the system prompt carries the brief.
 */
export const reviewer = definePlugin(() => ({
  name: 'reviewer',
  version: '1.0.0',
  kernel: '^1.0.0',
  dependencies: ['permissions'],
  apply(kernel) {
    kernel.hooks.contextLoad.tapPromise({ name: 'reviewer', stage: Stage.LATE }, async (context) => ({
      ...context,
      system: [...context.system, { type: 'text', text: BRIEF }],
    }));
    kernel.hooks.selectTools.tapPromise({ name: 'reviewer', stage: Stage.LATE }, async (tools) => tools.filter((tool) => allowed(tool)));
    kernel.hooks.prePermission.tapPromise({ name: 'reviewer', stage: Stage.FIRST }, async (call) => {
      const reason = refusal(call.name, kernel.tools.get(call.name));
      return reason ? { behavior: 'deny', reason } : undefined;
    });
  },
}));

/** `preset: 'keel-preset-reviewer'`: the default agent, without the web tools, under the reviewer policy. */
export default definePreset({
  name: 'reviewer',
  description: 'the default agent with read-only tools and a reviewer’s brief',
  extends: 'default',
  disable: ['tool-web'],
  plugins: [reviewer()],
});
