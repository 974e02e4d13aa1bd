import { definePreset } from '../kernel/index.js';
import queryAnthropic from '../plugins/query-anthropic/index.js';
import systemPrompt from '../plugins/system-prompt/index.js';
import permissions from '../plugins/permissions/index.js';
import print from '../plugins/print/index.js';

/** The smallest agent that answers: a provider, a prompt, a permission policy and the print frontend. */
export default definePreset({
  name: 'minimal',
  description: 'a provider, the base prompt, the permission policy and the headless frontend',
  plugins: [systemPrompt(), queryAnthropic(), permissions(), print()],
});
