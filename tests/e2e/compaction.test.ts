import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say, startAnthropicServer, type RecordedRequest, type ScriptedServer, type ScriptStep } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const WINDOW = 12_000;
const SMALL = 'claude-small-e2e';
const SUMMARY = ['Completed tasks', 'Key findings', 'Current state', 'Pending work', 'Important decisions'].map((s) => `## ${s}\n- noted`).join('\n');

/** A project config whose plugin adds a tool printing many lines (the schema is given as JSON Schema: no zod here). */
const CONFIG = `export default {
  contextWindow: ${WINDOW},
  maxTokens: 1000,
  smallModel: '${SMALL}',
  plugins: [{
    name: 'e2e-big-output',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.tools.register({
        name: 'big_output',
        description: 'Prints many lines',
        permission: 'read',
        input: { safeParse: (value) => ({ success: true, data: value }) },
        jsonSchema: { type: 'object', properties: { lines: { type: 'number' } }, required: ['lines'] },
        async execute(input) {
          return { content: Array.from({ length: input.lines }, (_, i) => 'line ' + (i + 1) + ': ' + 'x'.repeat(40)).join('\\n') };
        },
      });
    },
  }],
};
`;

const tokens = (r: RecordedRequest) => {
  const b = r.body as { system?: unknown; messages?: unknown; tools?: unknown };
  return Math.ceil(JSON.stringify({ system: b.system, messages: b.messages, tools: b.tools }).length / 4);
};
const isSmall = (r: RecordedRequest) => (r.body as { model?: string }).model === SMALL;

describe('compaction end to end', () => {
  let server: ScriptedServer | undefined;
  let ws: Workspace | undefined;
  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  it('a long headless session compacts, stays inside the window, ends with success and shows compact_boundary lines', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('agent.config.mjs', CONFIG);
    ws.write('AGENTS.md', '---\nmax_turns: 200\n---\nAlways answer briefly. PROJECT-RULE-E2E\n');
    const overflows: number[] = [];
    const sized =
      (step: ReturnType<typeof say>): ScriptStep =>
      (request) => {
        const n = tokens(request);
        if (n > WINDOW) {
          overflows.push(n);
          return { status: 400, errorMessage: `prompt is too long: ${n} tokens > ${WINDOW} maximum` };
        }
        return { ...step, usage: { input_tokens: n, output_tokens: 20 } };
      };
    const steps: ScriptStep[] = Array.from({ length: 40 }, () => sized(callTool('big_output', { lines: 150 })));
    steps.push(sized(say('long task done')));
    server = await startAnthropicServer(steps, { route: (r) => (isSmall(r) ? say(SUMMARY) : undefined) });

    const run = await runKeel(['-p', 'Run big_output forty times.', '--output-format', 'stream-json', '--permission-mode', 'auto', '--preset', 'headless', '--trust'], {
      cwd: ws.dir,
      env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url },
      timeoutMs: 60_000,
    });
    if (run.code !== 0) console.log(run.stderr);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const lines = ndjson(run.stdout);
    const result = lines[lines.length - 1];
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'long task done', num_turns: 41 });
    const boundaries = lines.filter((l) => l.type === 'system' && l.subtype === 'compact_boundary');
    expect(boundaries.length).toBeGreaterThan(2);
    for (const b of boundaries) {
      expect(b.compact_metadata.trigger).toBe('auto');
      expect(b.compact_metadata.pre_tokens).toBeGreaterThan(0);
    }
    expect(overflows).toEqual([]);
    const summaries = server.messageRequests().filter(isSmall);
    expect(summaries.length).toBe(boundaries.length);
    // The instructions reached the model, with their front matter applied (40+ turns under max_turns 200).
    const first = server.messageRequests().find((r) => !isSmall(r))!;
    expect(JSON.stringify((first.body as { system: unknown }).system)).toContain('PROJECT-RULE-E2E');
  });

  it('a bad setting in AGENTS.md front matter stops the run with a one-line error naming the file', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('AGENTS.md', '---\npermission_mode: yolo\n---\nbody\n');
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`${ws.path('AGENTS.md')}: permissionMode: must be one of`);
  });
});
