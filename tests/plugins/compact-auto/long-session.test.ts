import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../../kernel/index.js';
import compactApiMicro from '../../../plugins/compact-api-micro/index.js';
import compactAuto from '../../../plugins/compact-auto/index.js';
import compactMicro from '../../../plugins/compact-micro/index.js';
import compactSnip from '../../../plugins/compact-snip/index.js';
import contextBudget from '../../../plugins/context-budget/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import queryService from '../../../plugins/query-service/index.js';
import { callTool, say, startAnthropicServer, type RecordedRequest, type ScriptedServer, type ScriptStep } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { assertPairsIntact, bigTool, FIVE_SECTIONS, isSmall, MAIN_MODEL, recorder, requestTokens, sized, SMALL_MODEL, toolsPlugin } from './harness.js';

const WINDOW = 20_000;
const TURNS = 300;
let server: ScriptedServer;
let ws: Workspace;

beforeAll(async () => {
  ws = makeWorkspace();
});
afterAll(async () => {
  await server?.close();
  ws.cleanup();
});

const systemText = (request: RecordedRequest) => JSON.stringify((request.body as { system?: unknown }).system ?? '');

describe('a long session', () => {
  it(`runs ${TURNS} turns of large tool outputs inside the window and finishes`, async () => {
    const overflows: number[] = [];
    const steps: ScriptStep[] = [];
    // Outputs of 50, 300 and 1 000 lines (about 2.5k, 15k and 50k characters); every tenth one repeats.
    for (let i = 0; i < TURNS; i++) {
      const lines = [50, 300, 1000][i % 3]!;
      steps.push(sized(callTool('big_output', { lines, tag: i % 10 === 9 ? 'repeat' : `t${i}` }), WINDOW, overflows));
    }
    steps.push(sized(say('finished the long task'), WINDOW, overflows));
    server = await startAnthropicServer(steps, {
      route: (request) => {
        if (!isSmall(request)) return undefined;
        if (requestTokens(request) > 200_000) return { status: 400, errorMessage: 'prompt is too long' };
        return systemText(request).includes('condense one tool output') ? say('## What it is\nA numbered listing.\n## Key facts\n- many lines') : say(FIVE_SECTIONS);
      },
    });
    const rec = recorder();
    const kernel = testKernel(
      [
        rec.plugin,
        toolsPlugin(bigTool),
        queryAnthropic(), queryService(),
        permissions(),
        contextBudget(),
        compactApiMicro({ minChars: 40_000 }),
        compactMicro({ maxChars: 6000, maxLines: 150, headLines: 40, tailLines: 40 }),
        compactSnip(),
        compactAuto(),
      ],
      { baseURL: server.url, keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir, contextWindow: WINDOW, maxTokens: 2000, maxTurns: TURNS + 10, model: MAIN_MODEL, smallModel: SMALL_MODEL },
    );
    const session = await testSession(kernel);
    const result = await runAgent(kernel, session, 'Run big_output over and over, then report.');

    expect(result.subtype).toBe('success');
    expect(result.result).toBe('finished the long task');
    expect(result.numTurns).toBe(TURNS + 1);
    expect(overflows).toEqual([]);
    const compacts = rec.of('compact');
    expect(compacts.length).toBeGreaterThan(5);
    expect(compacts.every((c) => c.postTokens < c.preTokens)).toBe(true);
    const main = server.messageRequests().filter((r) => !isSmall(r));
    expect(Math.max(...main.map(requestTokens))).toBeLessThanOrEqual(WINDOW);
    // The 1 000-line outputs were summarised, the repeated one only once.
    const outputSummaries = server.messageRequests().filter((r) => isSmall(r) && systemText(r).includes('condense one tool output'));
    expect(outputSummaries.length).toBe(Math.ceil(TURNS / 3) - Math.floor(TURNS / 30) + 1);
    assertPairsIntact(session.messages);
    // After every compaction the user's request is still there, verbatim.
    const withRequest = main.filter((r) => JSON.stringify((r.body as { messages: unknown }).messages).includes('Run big_output over and over, then report.'));
    expect(withRequest).toHaveLength(main.length);
    expect(kernel.state.get().contextBudget!.remaining).toBeGreaterThan(0);
  });
});
