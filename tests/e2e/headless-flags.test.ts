/**
 * Keel's headless power through the built binary against the scripted model: --json-schema (an invalid answer,
 * then a valid one; and retries used up), --max-budget-usd (a budget hit mid-run, the session's across
 * --continue), --fallback-model (the main model answers 529 until its retries are spent), --goal (met on the
 * third turn; never met, bounded by --max-turns).
 */
import { describe, expect, it } from 'vitest';
import { callTool, say, type RecordedRequest, type ScriptedTurn } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { toolResultsOf } from '../helpers/conversations.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();

const SCHEMA = JSON.stringify({
  type: 'object',
  properties: { verdict: { type: 'string', enum: ['pass', 'fail'] }, count: { type: 'integer', minimum: 0 } },
  required: ['verdict', 'count'],
  additionalProperties: false,
});

const resultOf = (stdout: string) => ndjson(stdout).find((line) => line.type === 'result');

describe('--json-schema', () => {
  it('sends an invalid answer back with the validation errors, then ends with the valid one as structured_output', async () => {
    const { env, ws, server } = await prepare([
      callTool('StructuredOutput', { verdict: 'maybe', count: -1 }),
      callTool('structured_output', { verdict: 'pass', count: 3 }),
    ]);
    const run = await runKeel(['-p', 'check it', '--json-schema', SCHEMA, '--output-format', 'json'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const first = server.messageRequests()[0]!;
    const tool = first.body.tools.find((t: { name: string }) => t.name === 'structured_output');
    expect(tool.input_schema).toMatchObject(JSON.parse(SCHEMA));
    const sentBack = toolResultsOf(server.messageRequests()[1]!)[0]!;
    expect(sentBack.is_error).toBe(true);
    expect(sentBack.content).toContain('/verdict: must be equal to one of the allowed values');
    expect(sentBack.content).toContain('/count: must be >= 0');
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', is_error: false, structured_output: { verdict: 'pass', count: 3 } });
    expect(JSON.parse(result.result)).toEqual({ verdict: 'pass', count: 3 });
    expect(server.messageRequests()).toHaveLength(2);
  });

  it('a schema in a file works with text output; an answer in prose is sent back too', async () => {
    const { env, ws, server } = await prepare([say('It passes.'), callTool('structured_output', { verdict: 'fail', count: 0 })]);
    ws.write('schema.json', SCHEMA);
    const run = await runKeel(['-p', 'check it', '--json-schema', 'schema.json'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ verdict: 'fail', count: 0 });
    const nudge = server.messageRequests()[1]!.body.messages.at(-1);
    expect(JSON.stringify(nudge)).toContain('structured_output');
  });

  it('ends with error_max_structured_output_retries and exit 1 once the retries (config structuredOutputRetries) are used up', async () => {
    const bad = () => callTool('structured_output', { verdict: 'nope', count: 1 });
    const { env, ws, server } = await prepare([bad(), bad(), bad(), say('never asked')]);
    ws.write('keel.config.json', JSON.stringify({ structuredOutputRetries: 2 }));
    const run = await runKeel(['-p', 'check it', '--json-schema', SCHEMA, '--output-format', 'stream-json', '--config', 'keel.config.json'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    const result = resultOf(run.stdout);
    expect(result).toMatchObject({ type: 'result', subtype: 'error_max_structured_output_retries', is_error: true });
    expect(result.errors[0]).toContain('no valid structured output after 3 attempts');
    expect(result.structured_output).toBeUndefined();
    expect(run.stderr).toMatch(/^keel: no valid structured output after 3 attempts/);
    expect(server.messageRequests()).toHaveLength(3);
  });

  it('a bad schema or a missing file is one line naming --json-schema, before any request', async () => {
    const { env, ws, server } = await prepare([say('never')]);
    const missing = await runKeel(['-p', 'x', '--json-schema', 'nope.json'], { cwd: ws.dir, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^keel: --json-schema: "nope.json" is neither JSON nor a readable file/);
    const invalid = await runKeel(['-p', 'x', '--json-schema', '{"type":"object","properties":{"a":{"type":"strin"}}}'], { cwd: ws.dir, env });
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain('--json-schema: not a valid JSON Schema');
    const notObject = await runKeel(['-p', 'x', '--json-schema', '{"type":"array"}'], { cwd: ws.dir, env });
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('--json-schema');
    expect(server.messageRequests()).toHaveLength(0);
  });
});
