import { definePlugin, type Answer, type Io } from '../../kernel/index.js';
import { importWithoutCiMarkers } from './ci-markers.js';
import { loadRun } from './load-run.js';
import type { Bridge } from './run.js';

/**
 * The interactive terminal UI on Ink and React (`keel` on a terminal; `--ui ink`, the default). It reads
 * `kernel.state` and events, answers `askUser`, and runs commands from the registry. Ink and React are
 * imported only when the mode runs, so headless start-up does not pay for them.
 */
export default definePlugin(() => ({
  name: 'ui-ink',
  kernel: '^1.0.0',
  apply(kernel) {
    const loadUi = () => importWithoutCiMarkers(loadRun);
    // Which run is on screen: questions go to it; with none (another frontend runs), this UI does not answer.
    const bridge: Bridge = { questions: null };
    kernel.hooks.askUser.tapPromise('ui-ink', async (question): Promise<Answer | undefined> => bridge.questions?.ask(question));
    kernel.modes.register({
      name: 'interactive:ink',
      async run(ctx) {
        const { runInk } = await loadUi();
        return runInk(ctx, bridge);
      },
      async askTrust(question) {
        const { askTrustInk } = await loadUi();
        return askTrustInk(question, process as unknown as Io);
      },
    });
  },
}));
