import { definePreset } from '../kernel/index.js';
import full from './default.js';

/** Everything a scripted or CI run needs: the default agent without the interactive UIs (ui-ink, ui-plain). */
export default definePreset({
  name: 'headless',
  description: 'the full agent for scripts and CI, without the interactive UI',
  plugins: full.plugins.filter((plugin) => !plugin.name.startsWith('ui-')),
});
