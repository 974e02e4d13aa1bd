import { definePlugin, type Answer, type Question } from '../../kernel/index.js';

/** How the running plain UI answers questions; null while another frontend runs. */
export interface PlainBridge {
  ask: ((question: Question) => Promise<Answer>) | null;
}

/**
 * The plain interactive UI (`--ui plain`, or config `ui: 'plain'`): readline, no Ink, no React. The same
 * prompts, dialogs, commands and history as the Ink UI, as plain sequential lines — for screen readers,
 * dumb terminals and logs.
 */
export default definePlugin(() => ({
  name: 'ui-plain',
  kernel: '^1.0.0',
  apply(kernel) {
    const bridge: PlainBridge = { ask: null };
    kernel.hooks.askUser.tapPromise('ui-plain', async (question): Promise<Answer | undefined> => bridge.ask?.(question));
    kernel.modes.register({
      name: 'interactive:plain',
      async run(ctx) {
        const { runPlain } = await import('./cold.js');
        return runPlain(ctx, bridge);
      },
      async askTrust(question) {
        const { askTrustPlain } = await import('./cold.js');
        return askTrustPlain(question);
      },
    });
  },
}));
