import { definePreset } from '../kernel/index.js';
import queryAnthropic from '../plugins/query-anthropic/index.js';
import systemPrompt from '../plugins/system-prompt/index.js';
import permissions from '../plugins/permissions/index.js';
import print from '../plugins/print/index.js';

/** The full agent: every built-in plugin, every frontend. */
export default definePreset({
  name: 'default',
  description: 'the full agent with every built-in plugin and frontend',
  plugins: [systemPrompt(), queryAnthropic(), permissions(), print()],
});
