import { definePreset } from '../kernel/index.js';
import full from './default.js';

/**
 * Everything a scripted or CI run needs: the default agent without frontends that need a person at a
 * terminal. Today the only frontend is the headless one, so the two lists are the same.
 */
export default definePreset({
  name: 'headless',
  description: 'the full agent for scripts and CI, without the interactive UI',
  plugins: full.plugins.filter((plugin) => !plugin.name.startsWith('ui-')),
});
