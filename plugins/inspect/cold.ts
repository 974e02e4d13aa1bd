/** The sub-commands' code, loaded when one runs: `keel config`, `keel plugins`, `keel doctor`, `keel init`. */
export { configEntries, formatConfig } from './config-view.js';
export { formatDoctor, runDoctor } from './doctor.js';
export { init } from './init.js';
export { pluginsText } from './plugins-view.js';
export { initPrompt, initTarget } from './init-prompt.js';
