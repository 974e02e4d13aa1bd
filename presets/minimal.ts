import { definePreset } from '../kernel/index.js';
import network from '../plugins/network/index.js';
import queryAnthropic from '../plugins/query-anthropic/index.js';
import systemPrompt from '../plugins/system-prompt/index.js';
import permissions from '../plugins/permissions/index.js';
import print from '../plugins/print/index.js';
import toolsFs from '../plugins/tools-fs/index.js';
import toolBash from '../plugins/tool-bash/index.js';

/** The smallest agent that acts: a provider, a prompt, a permission policy, the file and shell tools and the print frontend. */
export default definePreset({
  name: 'minimal',
  description: 'a provider (and the network it goes through), the base prompt, the permission policy, the file and shell tools and the headless frontend',
  plugins: [systemPrompt(), network(), queryAnthropic(), permissions(), toolsFs(), toolBash(), print()],
});
