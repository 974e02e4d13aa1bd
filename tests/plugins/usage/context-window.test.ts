/**
 * The context-window gauge: `usage` publishes `contextTokens` / `contextWindow` in kernel.state, and
 * `context-budget` (which compaction reads) must agree with it, in the default preset.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { assemble } from '../../../cli/main.js';
import { runAgent, startSession } from '../../../kernel/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let server: ScriptedServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  server = undefined;
  ws = undefined;
});

async function run(model: string) {
  ws = makeWorkspace({ git: true });
  ws.write('notes.txt', 'hello\n');
  server = await startAnthropicServer([
    { ...callTool('read_file', { path: 'notes.txt' }, 'toolu_1'), usage: { input_tokens: 900, output_tokens: 40, cache_creation_input_tokens: 3000, cache_read_input_tokens: 0 } },
    say('It says hello.', { usage: { input_tokens: 60, output_tokens: 12, cache_creation_input_tokens: 100, cache_read_input_tokens: 3900 } }),
  ]);
  const env = { KEEL_HOME: ws.home, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key' };
  const kernel = await assemble({ outputFormat: 'text', inputFormat: 'text', permissionMode: 'auto', trust: true, model }, env, undefined, ws.dir);
  const session = await startSession(kernel, {});
  const windowAtStart = kernel.state.get().contextWindow;
  const result = await runAgent(kernel, session, 'what do the notes say?');
  expect(result.isError, result.error).toBe(false);
  return { kernel, session, windowAtStart };
}

describe('context-window use', () => {
  it.each([
    ['claude-sonnet-5-5', 200_000],
    ['claude-sonnet-4-5[1m]', 1_000_000],
  ])('usage and context-budget agree on tokens used and the window (%s)', async (model, window) => {
    const { kernel, session, windowAtStart } = await run(model);
    const state = kernel.state.get();
    expect(windowAtStart).toBe(window);
    expect(state.contextWindow).toBe(window);
    // What the last main response measured: input + cache read + cache write + output.
    expect(state.contextTokens).toBe(60 + 3900 + 100 + 12);
    expect(state.contextBudget).toMatchObject({ window, used: state.contextTokens, estimated: false });
    expect(kernel.services.require('budget', 'test').window(session)).toBe(window);
    const report = String(await kernel.commands.get('cost')!.run('', { kernel, session, print: () => undefined, signal: new AbortController().signal }));
    expect(report).toContain(`Context:       4,072 / ${window.toLocaleString('en-US')} tokens`);
  });
});
