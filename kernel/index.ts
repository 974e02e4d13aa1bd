/** The public kernel API: `import { definePlugin, Stage, … } from 'keel'`. */
export { createKernel, defaultConfig, initialState, PluginError, visibleControls, type Kernel } from './kernel.js';
export { createHooks, Stage, type Hooks, type HookName } from './hooks.js';
export {
  definePlugin,
  definePreset,
  defineConfig,
  defineTool,
  isPlugin,
  KERNEL_VERSION,
  type Plugin,
  type PluginEntry,
  type Preset,
  type KeelConfig,
  type PermissionRules,
  type McpServerConfig,
} from './plugin.js';
export { runAgent, addUsage, emptyUsage, defaultTools, toolGiven, type RunOptions } from './loop.js';
export { startSession, auxiliaryTurn, responseText } from './session.js';
export { findSlashCommand, runSlashCommand, type SlashCall } from './command.js';
export { toApiTool, describeInputError } from './tool-schema.js';
export { KeelError, ContextOverflowError, isContextOverflow, isAbortError, errorMessage, userMessage, userExitCode } from './errors.js';
export { Registry, ServiceRegistry } from './registry.js';
export { ensureDir } from './ensure-dir.js';
export { createStore, type Store } from './store.js';
export { normalizePermissionMode, type ResolvedConfig, type ConfigLayer, type PackageSource, type ManagedPolicy, type McpServerMatcher } from './resolved-config.js';
export type * from './types.js';
/** The zod Keel validates with, so plugins' tool inputs and config schemas match its version. */
export { z } from 'zod';
export { ProtectedPaths, coreProtectedEntries, savedOutputDir, frontMatterOf, CONFIG_FILE, FRONT_MATTER, SHELL_PROFILES, type ProtectedEntry, type ProtectedMatch, type ProtectedAccess } from './protected.js';
export { CLAUDE_TOOL_ALIASES, PATH_RULE_TOOLS, canonicalToolName, claudeToolName, splitToolList } from './tool-names.js';
export * as protocol from './protocol.js';
