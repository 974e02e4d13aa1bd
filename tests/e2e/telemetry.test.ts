/**
 * OpenTelemetry through the binary. On (KEEL_ENABLE_TELEMETRY=1 or Claude Code's CLAUDE_CODE_ENABLE_TELEMETRY=1), a
 * run's metrics and spans reach an OTLP/HTTP receiver as the OTEL_* variables say, flushed before the process exits,
 * without the prompt or the tool inputs unless OTEL_LOG_USER_PROMPTS=1. Off (the default), nothing is sent and neither
 * the telemetry recorder nor OpenTelemetry nor a cloud provider's SDK is loaded.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { KEEL_NODE_FLAGS, KEEL_SNAPSHOT_FLAGS } from '../../scripts/node-flags.mjs';
import { callTools, say, type ScriptStep } from '../helpers/anthropic-server.js';
import { cleanEnv, collect, KEEL_BIN, runKeel, type KeelRun } from '../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { useScriptedProjects } from '../helpers/project.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(root, 'dist', 'bin');
const TRACE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/trace-reads.cjs');
const prepare = useScriptedProjects();

const PROMPT_CANARY = 'prompt-canary-7d1f';
const INPUT_CANARY = 'file-content-canary-93ab';

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

/** A write (allowed by the mode) and a bash call (refused by a rule), then an answer. */
const SCRIPT: ScriptStep[] = [
  callTools({ name: 'write_file', input: { path: 'notes.txt', content: `one ${INPUT_CANARY}\ntwo\nthree\n` }, id: 'toolu_write' }, { name: 'bash', input: { command: 'echo hi' }, id: 'toolu_bash' }),
  say('written', { usage: { input_tokens: 300, output_tokens: 40, cache_read_input_tokens: 100 } }),
];

function otelEnv(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // Far longer than the run: what arrives was flushed at exit.
    OTEL_METRIC_EXPORT_INTERVAL: '600000',
    OTEL_RESOURCE_ATTRIBUTES: 'team=platform,deployment.environment=test',
    ...extra,
  };
}

describe('telemetry on', () => {
  it('exports metrics and spans of a run over OTLP/HTTP, flushed at exit, without prompts or tool inputs', async () => {
    receiver = await startOtlpReceiver();
    const { env, ws } = await prepare(SCRIPT);
    const run = await runKeel(['-p', `write the notes ${PROMPT_CANARY}`, '--permission-mode', 'auto', '--disallowedTools', 'Bash'], {
      cwd: ws.dir,
      env: { ...env, KEEL_ENABLE_TELEMETRY: '1', ...otelEnv(receiver.url) },
      timeoutMs: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('written\n');

    const points = receiver.points();
    const sum = (metric: string, match: Record<string, unknown> = {}) =>
      points.filter((p) => p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v)).reduce((total, p) => total + p.value, 0);
    expect(sum('keel.session.count')).toBe(1);
    // Two model requests of 10 + 300 input tokens, 5 + 40 output, 100 read from the cache.
    expect(sum('keel.token.usage', { type: 'input' })).toBe(310);
    expect(sum('keel.token.usage', { type: 'output' })).toBe(45);
    expect(sum('keel.token.usage', { type: 'cacheRead' })).toBe(100);
    expect(sum('keel.cost.usage')).toBeGreaterThan(0);
    expect(sum('keel.tool.decision', { decision: 'accept', tool: 'write_file' })).toBe(1);
    expect(sum('keel.tool.decision', { decision: 'reject', tool: 'bash' })).toBe(1);
    expect(sum('keel.lines_of_code.count', { type: 'added' })).toBe(3);
    expect(sum('keel.active_time.total')).toBeGreaterThan(0);
    const session = points.find((p) => p.metric === 'keel.session.count')!;
    expect(session.resource).toMatchObject({ 'service.name': 'keel', team: 'platform', 'deployment.environment': 'test' });

    const spans = receiver.spans();
    const turns = spans.filter((s) => s.name === 'keel.turn');
    expect(turns).toHaveLength(2);
    const requests = spans.filter((s) => s.name === 'keel.model_request');
    expect(requests).toHaveLength(2);
    const tools = spans.filter((s) => s.name === 'keel.tool');
    expect(tools.map((s) => s.attributes['keel.tool.name'])).toEqual(['write_file']);
    // Each model request and tool call sits in its turn.
    const turnIds = new Set(turns.map((s) => s.spanId));
    for (const child of [...requests, ...tools]) expect(turnIds.has(child.parentSpanId!)).toBe(true);
    expect(tools[0].parentSpanId).toBe(turns[0].spanId);
    expect(turns[0].attributes['keel.prompt_length']).toBe(`write the notes ${PROMPT_CANARY}`.length);

    // Neither the prompt nor the tool's input left the machine.
    const sent = receiver.requests.map((r) => r.body).join('\n');
    expect(sent).not.toContain(PROMPT_CANARY);
    expect(sent).not.toContain(INPUT_CANARY);
  }, 90_000);

  it('with OTEL_LOG_USER_PROMPTS=1 (and Claude Code’s switch) exports the prompt and the tool inputs', async () => {
    receiver = await startOtlpReceiver();
    const { env, ws } = await prepare(SCRIPT);
    const run = await runKeel(['-p', `write the notes ${PROMPT_CANARY}`, '--permission-mode', 'auto', '--disallowedTools', 'Bash'], {
      cwd: ws.dir,
      env: { ...env, CLAUDE_CODE_ENABLE_TELEMETRY: '1', OTEL_LOG_USER_PROMPTS: '1', ...otelEnv(receiver.url) },
      timeoutMs: 60_000,
    });
    expect(run.stderr).toBe('');
    const spans = receiver.spans();
    expect(spans.find((s) => s.name === 'keel.turn')!.attributes['keel.prompt']).toBe(`write the notes ${PROMPT_CANARY}`);
    expect(String(spans.find((s) => s.name === 'keel.tool')!.attributes['keel.tool.input'])).toContain(INPUT_CANARY);
  }, 90_000);

  it('an unsupported OTLP protocol is named in a warning, and the run goes on', async () => {
    receiver = await startOtlpReceiver();
    const { env, ws } = await prepare([say('fine')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, KEEL_ENABLE_TELEMETRY: '1', ...otelEnv(receiver.url, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }) }, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('fine\n');
    expect(run.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported');
  });

  it('config telemetry.enabled switches it on, and a malformed telemetry setting names the file and the key', async () => {
    receiver = await startOtlpReceiver();
    const { env, ws } = await prepare([say('configured')]);
    ws.write('agent.config.json', JSON.stringify({ telemetry: { enabled: true } }));
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: { ...env, ...otelEnv(receiver.url) }, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(receiver.points().some((p) => p.metric === 'keel.session.count')).toBe(true);
    ws.write('agent.config.json', JSON.stringify({ telemetry: { enabled: 'yes' } }));
    const bad = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: { ...env, ...otelEnv(receiver.url) }, timeoutMs: 60_000 });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/agent\.config\.json.*telemetry\.enabled/);
  });

  it('a collector that is down costs the run nothing', async () => {
    receiver = await startOtlpReceiver();
    const url = receiver.url;
    await receiver.close();
    receiver = undefined;
    const { env, ws } = await prepare([say('still fine')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, KEEL_ENABLE_TELEMETRY: '1', OTEL_EXPORTER_OTLP_TIMEOUT: '2000', ...otelEnv(url) }, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('still fine\n');
  });
});

type Start = 'from the snapshot' | 'without the snapshot';

/** Runs keel with every file it reads whole traced (see cold-parts.test.ts); returns the run and what it read. */
async function traced(start: Start, args: string[], opts: { cwd: string; env: Record<string, string | undefined> }): Promise<KeelRun & { reads: string[] }> {
  const file = path.join(opts.cwd, `.reads-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, '');
  let run: KeelRun;
  if (start === 'from the snapshot') {
    const child = spawn(process.execPath, [...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '--snapshot-blob', path.join(BIN, 'keel.blob'), '-r', TRACE, KEEL_BIN, ...args], {
      cwd: opts.cwd,
      env: cleanEnv({ ...opts.env, TRACE_READS_FILE: file }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin!.end('');
    run = await collect(child);
  } else {
    run = await runKeel(args, { cwd: opts.cwd, env: { ...opts.env, NODE_OPTIONS: `--require=${TRACE}`, TRACE_READS_FILE: file } });
  }
  return { ...run, reads: readFileSync(file, 'utf8').split('\n').filter(Boolean) };
}

/** Files of telemetry, OpenTelemetry or a cloud provider's SDK among those read. */
const heavy = (reads: string[]) => reads.filter((f) => /cold[\\/](telemetry|query-bedrock|query-vertex)\.cjs$|@opentelemetry|bedrock-sdk|vertex-sdk|@aws-sdk|google-auth-library/.test(f));

describe('telemetry off', () => {
  for (const start of ['from the snapshot', 'without the snapshot'] as Start[]) {
    it(`loads no OpenTelemetry, telemetry or cloud SDK module and sends nothing (${start})`, async () => {
      receiver = await startOtlpReceiver();
      const { env, ws } = await prepare([say('one turn'), say('with telemetry')]);
      const off = await traced(start, ['-p', 'hi'], { cwd: ws.dir, env: { ...env, ...otelEnv(receiver.url) } });
      expect(off.stdout).toBe('one turn\n');
      expect(heavy(off.reads)).toEqual([]);
      expect(receiver.requests).toEqual([]);
      // Not vacuous: switched on, the same trace sees the recorder load and the receiver hear from it.
      const on = await traced(start, ['-p', 'hi'], { cwd: ws.dir, env: { ...env, KEEL_ENABLE_TELEMETRY: '1', ...otelEnv(receiver.url) } });
      expect(on.stdout).toBe('with telemetry\n');
      expect(heavy(on.reads).some((f) => f.endsWith(`${path.sep}telemetry.cjs`) || f.includes('@opentelemetry'))).toBe(true);
      expect(receiver.requests.length).toBeGreaterThan(0);
    }, 90_000);
  }
});
