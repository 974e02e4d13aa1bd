import { definePreset } from '../kernel/index.js';
import queryAnthropic from '../plugins/query-anthropic/index.js';
import systemPrompt from '../plugins/system-prompt/index.js';
import permissions from '../plugins/permissions/index.js';
import print from '../plugins/print/index.js';

/** Everything a scripted or CI run needs, without the interactive UI. */
export default definePreset({
  name: 'headless',
  description: 'the full agent for scripts and CI, without the interactive UI',
  plugins: [systemPrompt(), queryAnthropic(), permissions(), print()],
});
