/**
 * What `import … from 'keel'` (and `keel/presets`, `keel/plugins/<name>`) means inside a config or a plugin that
 * Keel loads: the modules of the running Keel, never a second copy from node_modules or dist/ (two kernels would
 * mean two `Stage`s, two zods and plugin brands that do not match). Every built-in plugin is already part of the
 * CLI's bundle (the presets import them all), so these static imports add nothing to it.
 */
import * as kernel from '../kernel/index.js';
import * as presets from '../presets/index.js';
import * as acp from '../plugins/acp/index.js';
import * as askUser from '../plugins/ask-user/index.js';
import * as budget from '../plugins/budget/index.js';
import * as checkpoints from '../plugins/checkpoints/index.js';
import * as claudeCommands from '../plugins/claude-commands/index.js';
import * as claudeSettings from '../plugins/claude-settings/index.js';
import * as compactApiMicro from '../plugins/compact-api-micro/index.js';
import * as compactAuto from '../plugins/compact-auto/index.js';
import * as compactFull from '../plugins/compact-full/index.js';
import * as compactMicro from '../plugins/compact-micro/index.js';
import * as compactSnip from '../plugins/compact-snip/index.js';
import * as contextBudget from '../plugins/context-budget/index.js';
import * as customCommands from '../plugins/custom-commands/index.js';
import * as denialLog from '../plugins/denial-log/index.js';
import * as fleet from '../plugins/fleet/index.js';
import * as goal from '../plugins/goal/index.js';
import * as inspect from '../plugins/inspect/index.js';
import * as instructions from '../plugins/instructions/index.js';
import * as managedSettings from '../plugins/managed-settings/index.js';
import * as mcpBridge from '../plugins/mcp-bridge/index.js';
import * as memoryIndex from '../plugins/memory-index/index.js';
import * as modelFallback from '../plugins/model-fallback/index.js';
import * as network from '../plugins/network/index.js';
import * as outputStyles from '../plugins/output-styles/index.js';
import * as permissions from '../plugins/permissions/index.js';
import * as planMode from '../plugins/plan-mode/index.js';
import * as policyStrict from '../plugins/policy-strict/index.js';
import * as print from '../plugins/print/index.js';
import * as queryAnthropic from '../plugins/query-anthropic/index.js';
import * as queryBedrock from '../plugins/query-bedrock/index.js';
import * as queryOpenai from '../plugins/query-openai/index.js';
import * as queryRetry from '../plugins/query-retry/index.js';
import * as queryService from '../plugins/query-service/index.js';
import * as queryVertex from '../plugins/query-vertex/index.js';
import * as redis from '../plugins/redis/index.js';
import * as sandbox from '../plugins/sandbox/index.js';
import * as sdk from '../plugins/sdk/index.js';
import * as sessionStore from '../plugins/session-store/index.js';
import * as sessionStoreRedis from '../plugins/session-store-redis/index.js';
import * as skills from '../plugins/skills/index.js';
import * as statusLine from '../plugins/status-line/index.js';
import * as structuredOutput from '../plugins/structured-output/index.js';
import * as systemPrompt from '../plugins/system-prompt/index.js';
import * as telemetry from '../plugins/telemetry/index.js';
import * as toolAgent from '../plugins/tool-agent/index.js';
import * as toolBash from '../plugins/tool-bash/index.js';
import * as toolDocuments from '../plugins/tool-documents/index.js';
import * as toolSearch from '../plugins/tool-search/index.js';
import * as toolTodo from '../plugins/tool-todo/index.js';
import * as toolWeb from '../plugins/tool-web/index.js';
import * as toolWebSearch from '../plugins/tool-web-search/index.js';
import * as toolsFs from '../plugins/tools-fs/index.js';
import * as uiInk from '../plugins/ui-ink/index.js';
import * as uiPlain from '../plugins/ui-plain/index.js';
import * as usage from '../plugins/usage/index.js';
import * as userHooks from '../plugins/user-hooks/index.js';

/** `keel/plugins/<folder>` → the plugin module; tests/cli/keel-modules.test.ts checks it lists every folder. */
export const BUILT_IN_PLUGIN_MODULES: Readonly<Record<string, Record<string, unknown>>> = {
  acp, 'ask-user': askUser, budget, checkpoints, 'claude-commands': claudeCommands, 'claude-settings': claudeSettings,
  'compact-api-micro': compactApiMicro, 'compact-auto': compactAuto, 'compact-full': compactFull,
  'compact-micro': compactMicro, 'compact-snip': compactSnip, 'context-budget': contextBudget,
  'custom-commands': customCommands, 'denial-log': denialLog, fleet, goal, inspect, instructions,
  'managed-settings': managedSettings, 'mcp-bridge': mcpBridge, 'memory-index': memoryIndex,
  'model-fallback': modelFallback, network, 'output-styles': outputStyles, permissions, 'plan-mode': planMode,
  'policy-strict': policyStrict, print, 'query-anthropic': queryAnthropic, 'query-bedrock': queryBedrock,
  'query-openai': queryOpenai, 'query-retry': queryRetry, 'query-service': queryService, 'query-vertex': queryVertex,
  redis, sandbox, sdk, 'session-store': sessionStore, 'session-store-redis': sessionStoreRedis, skills,
  'status-line': statusLine, 'structured-output': structuredOutput, 'system-prompt': systemPrompt, telemetry,
  'tool-agent': toolAgent, 'tool-bash': toolBash, 'tool-documents': toolDocuments, 'tool-search': toolSearch,
  'tool-todo': toolTodo, 'tool-web': toolWeb, 'tool-web-search': toolWebSearch, 'tools-fs': toolsFs, 'ui-ink': uiInk,
  'ui-plain': uiPlain, usage, 'user-hooks': userHooks,
};

/**
 * The running Keel's module for `keel`, `keel/presets` or `keel/plugins/<name>`; undefined for any other
 * specifier (`keel/sdk` and `keel/testing`, which the CLI does not hold, resolve as any package does). An unknown
 * `keel/plugins/…` name is an error naming it.
 */
export function keelModule(specifier: string): Record<string, unknown> | undefined {
  if (specifier === 'keel') return kernel as unknown as Record<string, unknown>;
  if (specifier === 'keel/presets') return presets as unknown as Record<string, unknown>;
  const plugin = /^keel\/plugins\/([\w-]+)(?:\/index(?:\.js)?)?$/.exec(specifier)?.[1];
  if (plugin && Object.hasOwn(BUILT_IN_PLUGIN_MODULES, plugin)) return BUILT_IN_PLUGIN_MODULES[plugin];
  if (specifier.startsWith('keel/plugins/')) throw new Error(`'${specifier}' is not a plugin of Keel (its plugins: ${Object.keys(BUILT_IN_PLUGIN_MODULES).join(', ')})`);
  return undefined;
}
