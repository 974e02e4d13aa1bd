/**
 * `keel/testing`: run a plugin inside a real kernel with a scripted model, in process, from any test runner.
 *
 * ```ts
 * const agent = await testAgent({ plugins: [myPlugin()], script: [{ tools: [{ name: 'bash', input: { command: 'git push' } }] }, 'done'] });
 * const result = await agent.run('push it');
 * agent.toolResults()[0]; // what the model was told about the push
 * await agent.close();
 * ```
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createKernel,
  defaultConfig,
  runAgent,
  startSession,
  Stage,
  type AgentEvent,
  type Answer,
  type Kernel,
  type PermissionMode,
  type Plugin,
  type Preset,
  type Question,
  type ResolvedConfig,
  type RunOptions,
  type RunResult,
  type Session,
} from '../kernel/index.js';
import { flattenPreset, loadPreset, PRESET_NAMES } from '../presets/index.js';
import { scriptedModel, type ScriptedModel, type ScriptStep } from './scripted-model.js';

export { scriptedModel, SCRIPTED_MODEL, type ScriptedModel, type ScriptedReply, type ScriptStep } from './scripted-model.js';

export interface TestAgentOptions {
  /** The model's replies, one per request, in order. */
  script: ScriptStep[];
  /** A built-in preset by name, or a preset object; `minimal` by default (provider, prompt, policy, file and shell tools). */
  preset?: string | Preset;
  /** Plugins added after the preset's (the ones under test). */
  plugins?: Plugin[];
  /** `ask` by default, as for a user who has configured nothing. */
  permissionMode?: PermissionMode;
  /**
   * Who answers permission (and other) questions: `allow` (allow once), `deny`, or a function; unanswered
   * questions are denied, as in a headless run.
   */
  answer?: 'allow' | 'deny' | ((question: Question) => Answer | undefined);
  /** Config keys, as `agent.config.ts` would set them (plugin options go to the plugin factories instead). */
  config?: Partial<ResolvedConfig>;
  /** The project folder; a new temporary folder by default (removed by `close()`). */
  cwd?: string;
}

export interface TestAgent {
  kernel: Kernel;
  session: Session;
  /** The project folder the agent works in. */
  dir: string;
  /** Its `KEEL_HOME`: always a temporary folder, never the user's. */
  home: string;
  model: ScriptedModel;
  /** Every event the kernel emitted, in order. */
  events: AgentEvent[];
  /** Sends a user prompt and runs the loop to its end. */
  run(prompt: string, options?: RunOptions): Promise<RunResult>;
  /** The results the model was sent for its tool calls, in order. */
  toolResults(): Array<{ toolUseId: string; content: unknown; isError: boolean }>;
  /** Ends the session and removes the temporary folders. */
  close(): Promise<void>;
}

const ANSWERER = 'keel-testing';

export async function testAgent(options: TestAgentOptions): Promise<TestAgent> {
  const preset = await resolvePreset(options.preset ?? 'minimal');
  const temp: string[] = [];
  const tempDir = (prefix: string) => {
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
    temp.push(dir);
    return dir;
  };
  const dir = options.cwd ? path.resolve(options.cwd) : tempDir('keel-test-project-');
  const home = tempDir('keel-test-home-');
  const model = scriptedModel(options.script);
  const kernel = createKernel({
    config: defaultConfig({
      model: 'scripted-model',
      ...options.config,
      apiKey: 'scripted',
      cwd: dir,
      projectRoot: dir,
      keelHome: home,
      preset,
      trusted: true,
      permissionMode: options.permissionMode ?? options.config?.permissionMode ?? 'ask',
    }),
  });
  for (const plugin of [...preset.plugins, ...(options.plugins ?? []), model, ...answerer(options.answer)]) kernel.use(plugin);
  kernel.seal();
  const events: AgentEvent[] = [];
  const stop = kernel.observe((event) => events.push(event));
  const session = await startSession(kernel);
  return {
    kernel,
    session,
    dir,
    home,
    model,
    events,
    run: (prompt, runOptions) => runAgent(kernel, session, prompt, runOptions),
    toolResults: () => toolResultsOf(session),
    async close() {
      stop();
      // What a preset may have open: the session's file (session-store) and MCP servers (mcp-bridge).
      (kernel.services.get('session-store') as { close?(s: Session): void } | undefined)?.close?.(session);
      await (kernel.services.get('mcp') as { close?(): Promise<void> } | undefined)?.close?.();
      for (const folder of temp) rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function resolvePreset(preset: string | Preset): Promise<Preset> {
  if (typeof preset !== 'string') return flattenPreset(preset, loadPreset, PRESET_NAMES);
  const found = await loadPreset(preset);
  if (!found) throw new Error(`testAgent: preset: no built-in preset "${preset}" (known presets: ${PRESET_NAMES.join(', ')})`);
  return found;
}

function answerer(answer: TestAgentOptions['answer']): Plugin[] {
  if (answer === undefined) return [];
  const decide = typeof answer === 'function' ? answer : (question: Question): Answer | undefined =>
    question.kind === 'permission' ? { kind: 'permission', choice: answer === 'allow' ? 'allow_once' : 'deny' } : undefined;
  return [
    {
      name: ANSWERER,
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.hooks.askUser.tapPromise({ name: ANSWERER, stage: Stage.FIRST }, async (question) => decide(question));
      },
    },
  ];
}

function toolResultsOf(session: Session): Array<{ toolUseId: string; content: unknown; isError: boolean }> {
  const results: Array<{ toolUseId: string; content: unknown; isError: boolean }> = [];
  for (const message of session.messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result') results.push({ toolUseId: block.tool_use_id, content: block.content, isError: block.is_error === true });
    }
  }
  return results;
}
