import { definePreset } from '../kernel/index.js';
import queryAnthropic from '../plugins/query-anthropic/index.js';
import queryRetry from '../plugins/query-retry/index.js';
import network from '../plugins/network/index.js';
import queryOpenAI from '../plugins/query-openai/index.js';
import queryBedrock from '../plugins/query-bedrock/index.js';
import queryVertex from '../plugins/query-vertex/index.js';
import queryService from '../plugins/query-service/index.js';
import usage from '../plugins/usage/index.js';
import telemetry from '../plugins/telemetry/index.js';
import systemPrompt from '../plugins/system-prompt/index.js';
import permissions from '../plugins/permissions/index.js';
import denialLog from '../plugins/denial-log/index.js';
import sandbox from '../plugins/sandbox/index.js';
import userHooks from '../plugins/user-hooks/index.js';
import claudeSettings from '../plugins/claude-settings/index.js';
import print from '../plugins/print/index.js';
import inspect from '../plugins/inspect/index.js';
import sdk from '../plugins/sdk/index.js';
import acp from '../plugins/acp/index.js';
import toolAgent from '../plugins/tool-agent/index.js';
import budget from '../plugins/budget/index.js';
import modelFallback from '../plugins/model-fallback/index.js';
import structuredOutput from '../plugins/structured-output/index.js';
import goal from '../plugins/goal/index.js';
import uiInk from '../plugins/ui-ink/index.js';
import uiPlain from '../plugins/ui-plain/index.js';
import toolsFs from '../plugins/tools-fs/index.js';
import toolBash from '../plugins/tool-bash/index.js';
import toolWeb from '../plugins/tool-web/index.js';
import toolTodo from '../plugins/tool-todo/index.js';
import toolSearch from '../plugins/tool-search/index.js';
import mcpBridge from '../plugins/mcp-bridge/index.js';
import toolWebSearch from '../plugins/tool-web-search/index.js';
import toolDocuments from '../plugins/tool-documents/index.js';
import askUser from '../plugins/ask-user/index.js';
import planMode from '../plugins/plan-mode/index.js';
import checkpoints from '../plugins/checkpoints/index.js';
import sessionStore from '../plugins/session-store/index.js';
import instructions from '../plugins/instructions/index.js';
import memoryIndex from '../plugins/memory-index/index.js';
import contextBudget from '../plugins/context-budget/index.js';
import compactApiMicro from '../plugins/compact-api-micro/index.js';
import compactMicro from '../plugins/compact-micro/index.js';
import compactSnip from '../plugins/compact-snip/index.js';
import compactAuto from '../plugins/compact-auto/index.js';
import compactFull from '../plugins/compact-full/index.js';
import skills from '../plugins/skills/index.js';
import customCommands from '../plugins/custom-commands/index.js';
import outputStyles from '../plugins/output-styles/index.js';
import statusLine from '../plugins/status-line/index.js';
import claudeCommands from '../plugins/claude-commands/index.js';
import redis from '../plugins/redis/index.js';
import fleet from '../plugins/fleet/index.js';

/** The full agent: every built-in plugin and frontend. */
export default definePreset({
  name: 'default',
  description: 'the full agent with every built-in plugin and frontend',
  plugins: [
    // context: the base prompt, then project instructions and the memory index (stable sections first)
    systemPrompt(),
    instructions(),
    memoryIndex(),
    // skills: their names and descriptions in the prompt, the `skill` tool, `/skills` and `/<skill>`
    skills(),
    // Claude Code's output styles: the tone section of the base prompt, per session
    outputStyles(),
    // the network every connection goes through (proxies, client certificates), then the model: retries, providers
    // (the one matching config `provider` answers), tiers, accounting
    network(),
    queryRetry(),
    queryAnthropic(),
    queryOpenAI(),
    // Claude on Amazon Bedrock and Google Vertex AI: `provider: 'bedrock' | 'vertex'` or CLAUDE_CODE_USE_BEDROCK / _VERTEX
    queryBedrock(),
    queryVertex(),
    queryService(),
    usage(),
    // OpenTelemetry metrics and traces: off unless KEEL_ENABLE_TELEMETRY=1 or config telemetry.enabled
    telemetry(),
    // headless limits: --max-budget-usd before every request, then --fallback-model around the provider
    budget(),
    modelFallback(),
    // safety: rules and modes, the per-session denial memory, the shell sandbox
    permissions(),
    denialLog(),
    sandbox(),
    planMode(),
    // Claude Code's settings files as config layers, then the user's own hooks (Claude Code's format)
    claudeSettings(),
    userHooks(),
    // sessions on disk
    sessionStore(),
    checkpoints(),
    // context management: the budget, then the tiers from cheapest to dearest
    contextBudget(),
    compactApiMicro(),
    compactMicro(),
    compactSnip(),
    compactAuto(),
    compactFull(),
    // tools
    toolsFs(),
    toolBash(),
    toolWeb(),
    toolTodo(),
    toolWebSearch(),
    toolDocuments(),
    askUser(),
    toolSearch(),
    mcpBridge(),
    toolAgent(),
    // headless answers: --json-schema's structured_output tool, then --goal's check after each turn
    structuredOutput(),
    goal(),
    // custom slash commands from .claude/commands (Claude Code's format) and the user's folders
    customCommands(),
    // frontends: headless/pipe, the SDK host and sub-agent protocol, and the two interactive UIs
    // (`--ui ink`, the default, or `--ui plain`)
    print(),
    sdk(),
    acp(),
    // the user's statusLine command, run while an interactive UI is up
    statusLine(),
    uiInk(),
    uiPlain(),
    // keel config | plugins | doctor | init (and /config, /doctor, /init)
    inspect(),
    // Claude Code's commands no other plugin owns: /export, /context, /review, /login
    claudeCommands(),
    // the connection to Redis that fleet and session-store-redis share (ioredis loads on the first connection), then
    // keel fleet (BullMQ on Redis; its code is a cold part), and the fleet-wide request rate in runs a worker starts
    redis(),
    fleet(),
  ],
});
