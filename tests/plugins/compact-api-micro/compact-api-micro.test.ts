import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, savedOutputDir } from '../../../kernel/index.js';
import compactApiMicro from '../../../plugins/compact-api-micro/index.js';
import compactMicro from '../../../plugins/compact-micro/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import queryService from '../../../plugins/query-service/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer, type ScriptedTurn } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { bigTool, isSmall, recorder, SMALL_MODEL, toolsPlugin } from '../compact-auto/harness.js';
import { until } from '../../helpers/until.js';

const SUMMARY = '## What it is\nA listing of 3000 numbered lines.\n## Key facts\n- nothing failed';

describe('compact-api-micro', () => {
  let server: ScriptedServer | undefined;
  let ws: Workspace | undefined;
  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  async function setup(small: () => ScriptedTurn, script = [callTool('big_output', { lines: 3000 }), callTool('big_output', { lines: 3000 }), say('done')]) {
    ws ??= makeWorkspace();
    server = await startAnthropicServer(script, { route: (request) => (isSmall(request) ? small() : undefined) });
    const rec = recorder();
    const kernel = testKernel([rec.plugin, toolsPlugin(bigTool), queryAnthropic(), queryService(), permissions(), compactApiMicro({ minChars: 50_000 }), compactMicro()], {
      baseURL: server.url,
      keelHome: ws.home,
      smallModel: SMALL_MODEL,
    });
    return { kernel, rec, session: await testSession(kernel) };
  }

  const toolResults = () =>
    server!
      .messageRequests()
      .filter((r) => !isSmall(r))
      .flatMap((r) => (r.body as { messages: Array<{ content: unknown }> }).messages)
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: { type: string }) => b.type === 'tool_result') as Array<{ content: string }>;

  it('summarises a very large output with the small model, once: the repeat is served from the disk cache', async () => {
    const { kernel, session } = await setup(() => say(SUMMARY));
    const result = await runAgent(kernel, session, 'go');
    expect(result.subtype).toBe('success');
    const small = server!.messageRequests().filter(isSmall);
    expect(small).toHaveLength(1);
    const body = small[0]!.body as { model: string; system: Array<{ text: string }>; stream?: boolean; messages: Array<{ content: unknown }> };
    expect(body.model).toBe(SMALL_MODEL);
    expect(JSON.stringify(body.messages)).toContain('line 2999:');
    const results = toolResults();
    expect(results.length).toBeGreaterThanOrEqual(2);
    for (const r of results) {
      expect(r.content).toContain('[Output summarised: 3000 lines');
      expect(r.content).toContain('A listing of 3000 numbered lines.');
    }
    const dir = path.join(ws!.home, 'cache', 'compact-api-micro');
    expect(readdirSync(dir).sort().filter((f) => f.endsWith('.json'))).toHaveLength(1);
    expect(readdirSync(dir).filter((f) => f.endsWith('.txt'))).toEqual([]);
    // The full output is the session's own: under its saved-outputs folder, which only it reads unasked.
    const own = savedOutputDir(ws!.home, session.id);
    const raw = readdirSync(own).find((f) => f.endsWith('.txt'))!;
    expect(results[0]!.content).toContain(path.join(own, raw));
    expect(readFileSync(path.join(own, raw), 'utf8').split('\n')).toHaveLength(3000);
  });

  it('a new session (a later run) hits the same cache: no call at all', async () => {
    await (async () => {
      const { kernel, session } = await setup(() => say(SUMMARY), [callTool('big_output', { lines: 3000 }), say('done')]);
      await runAgent(kernel, session, 'go');
      await server!.close();
    })();
    const { kernel, session } = await setup(() => say('should not be asked'), [callTool('big_output', { lines: 3000 }), say('done')]);
    await runAgent(kernel, session, 'go again');
    expect(server!.messageRequests().filter(isSmall)).toHaveLength(0);
    expect(toolResults()[0]!.content).toContain('A listing of 3000 numbered lines.');
  });

  it('when the summary fails, the output goes on to compact-micro (truncated) and nothing is cached', async () => {
    const { kernel, session, rec } = await setup(() => ({ status: 500, errorMessage: 'down' }), [callTool('big_output', { lines: 3000 }), say('done')]);
    const result = await runAgent(kernel, session, 'go');
    expect(result.subtype).toBe('success');
    expect(toolResults()[0]!.content).toContain('[Output truncated:');
    expect(rec.of('log').some((l) => l.level === 'warn' && l.message.includes('could not summarise'))).toBe(true);
    expect(existsSync(path.join(ws!.home, 'cache', 'compact-api-micro'))).toBe(false);
  });

  it('stops the summary call when the user aborts', async () => {
    const { kernel, session, rec } = await setup(() => ({ fault: 'hang' }), [callTool('big_output', { lines: 3000 }), say('done')]);
    const controller = new AbortController();
    const pending = runAgent(kernel, session, 'go', { signal: controller.signal });
    await until(() => server!.messageRequests().filter(isSmall).length > 0, 'the request to the small model');
    expect(server!.messageRequests().filter(isSmall)).toHaveLength(1);
    controller.abort();
    const result = await pending;
    expect(result.aborted).toBe(true);
    expect(rec.of('log').some((l) => l.message.includes('could not summarise'))).toBe(false);
    expect(existsSync(path.join(ws!.home, 'cache', 'compact-api-micro'))).toBe(false);
  });

  it('uses a summary it cannot cache (the cache folder is not writable), saying so', async () => {
    ws = makeWorkspace();
    // $KEEL_HOME/cache is a file: the cache folder cannot be made, the session's saved outputs still can.
    writeFileSync(path.join(ws.home, 'cache'), 'not a folder');
    const { kernel, rec, session } = await setup(() => say(SUMMARY), [callTool('big_output', { lines: 3000 }), say('done')]);
    const result = await runAgent(kernel, session, 'go');
    expect(result.subtype).toBe('success');
    expect(toolResults()[0]!.content).toContain('A listing of 3000 numbered lines.');
    const warnings = rec.of('log').filter((e) => e.level === 'warn').map((e) => e.message);
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^could not cache the summary of big_output's output in ${path.join(ws.home, 'cache', 'compact-api-micro').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOTDIR`))]);
    expect(readFileSync(path.join(ws.home, 'cache'), 'utf8')).toBe('not a folder');
  });

  it('leaves outputs under the threshold alone', async () => {
    const { kernel, session } = await setup(() => say(SUMMARY), [callTool('big_output', { lines: 100 }), say('done')]);
    await runAgent(kernel, session, 'go');
    expect(server!.messageRequests().filter(isSmall)).toHaveLength(0);
    expect(toolResults()[0]!.content).toContain('line 100:');
  });
});
