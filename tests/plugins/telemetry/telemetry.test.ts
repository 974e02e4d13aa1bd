import { MeterProvider, AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { telemetryEnabled } from '../../../plugins/telemetry/index.js';
import { createEventRecorder, lineChanges } from '../../../plugins/telemetry/recorder.js';

describe('the telemetry switch', () => {
  it('is off by default, on with KEEL_ENABLE_TELEMETRY or CLAUDE_CODE_ENABLE_TELEMETRY, and config has the last word', () => {
    expect(telemetryEnabled(undefined, {})).toBe(false);
    expect(telemetryEnabled(undefined, { KEEL_ENABLE_TELEMETRY: '1' })).toBe(true);
    expect(telemetryEnabled(undefined, { CLAUDE_CODE_ENABLE_TELEMETRY: 'true' })).toBe(true);
    expect(telemetryEnabled(undefined, { KEEL_ENABLE_TELEMETRY: '0' })).toBe(false);
    expect(telemetryEnabled({ enabled: true }, {})).toBe(true);
    expect(telemetryEnabled({ enabled: false }, { KEEL_ENABLE_TELEMETRY: '1' })).toBe(false);
  });
});

describe('lines changed', () => {
  it("takes a file tool's own counts from its display, and nothing from a tool that reports none", () => {
    expect(lineChanges({ diff: '…', linesAdded: 1, linesRemoved: 2 })).toEqual({ added: 1, removed: 2 });
    expect(lineChanges({ created: true, linesAdded: 3, linesRemoved: 0 })).toEqual({ added: 3, removed: 0 });
    expect(lineChanges({ lines: 4 })).toBeUndefined();
    expect(lineChanges(undefined)).toBeUndefined();
  });
});

describe('the recorder', () => {
  it('parents tool and model-request spans to their turn, and counts a refused call as rejected', async () => {
    const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const spans = new InMemorySpanExporter();
    const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
    const recorder = createEventRecorder({
      meter: meterProvider.getMeter('t'),
      tracer: tracerProvider.getTracer('t'),
      logUserPrompts: false,
      shutdown: async () => {
        await reader.forceFlush();
        await tracerProvider.forceFlush();
      },
    });
    const usage = { input_tokens: 7, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const t = Date.now();
    recorder.record({ at: t, event: { type: 'turn_start', turn: 1 } });
    recorder.record({ at: t + 1, event: { type: 'query_start', tier: 'main', model: 'm' } });
    recorder.record({ at: t + 50, event: { type: 'usage', usage, costUsd: 0.01, model: 'm', tier: 'main' } });
    recorder.record({ at: t + 51, event: { type: 'permission', call: { id: 'a', name: 'bash', input: {} }, decision: { behavior: 'deny', reason: 'no' }, source: 'user' } });
    recorder.record({ at: t + 52, event: { type: 'tool_start', call: { id: 'b', name: 'read_file', input: { path: 'secret-path' } } } });
    recorder.record({ at: t + 60, event: { type: 'tool_end', call: { id: 'b', name: 'read_file', input: {} }, result: { content: 'x' }, durationMs: 8 } });
    await recorder.shutdown();

    const finished = spans.getFinishedSpans();
    const turn = finished.find((s) => s.name === 'keel.turn')!;
    const request = finished.find((s) => s.name === 'keel.model_request')!;
    const tool = finished.find((s) => s.name === 'keel.tool')!;
    expect(request.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(tool.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    // The model request's span runs from the request's start to its answer.
    const ms = (time: [number, number]) => time[0] * 1000 + time[1] / 1e6;
    expect(ms(request.startTime)).toBeCloseTo(t + 1, 3);
    expect(ms(request.endTime) - ms(request.startTime)).toBeCloseTo(49, 3);
    expect(JSON.stringify(tool.attributes)).not.toContain('secret-path');

    const decisions = metrics
      .getMetrics()
      .flatMap((m) => m.scopeMetrics.flatMap((s) => s.metrics))
      .filter((m) => m.descriptor.name === 'keel.tool.decision')
      .flatMap((m) => m.dataPoints.map((p) => ({ ...p.attributes, value: p.value })));
    expect(decisions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool: 'bash', decision: 'reject', source: 'user', value: 1 }),
        expect.objectContaining({ tool: 'read_file', decision: 'accept', source: 'config', value: 1 }),
      ]),
    );
  });
});
