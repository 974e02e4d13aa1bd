/**
 * The telemetry recorder, loaded only when telemetry is on: the OpenTelemetry SDK's meter and tracer providers with
 * the OTLP/HTTP exporters, configured by the standard OTEL_* variables (the exporters read the endpoint, headers,
 * timeouts and temporality themselves; the batch span processor its OTEL_BSP_* settings).
 */
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type http from 'node:http';
import { createEventRecorder, type Recorder } from './recorder.js';

export type { Recorder } from './recorder.js';

export interface RecorderOptions {
  logUserPrompts: boolean;
  /** The `network` service, looked up when an exporter opens its connection pool. */
  network(): { agentFor?(url: string): http.Agent | undefined } | undefined;
  log(level: 'debug' | 'warn', message: string): void;
}

/** Milliseconds between metric exports: OTEL_METRIC_EXPORT_INTERVAL, else 60 s (the SDK's default). */
function exportInterval(env: NodeJS.ProcessEnv): number {
  const value = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return Number.isInteger(value) && value > 0 ? value : 60_000;
}

/** Keel's exporters send OTLP as JSON over HTTP; other protocols are not built in. */
function protocolWarnings(env: NodeJS.ProcessEnv): string[] {
  const names = ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'];
  return names.filter((name) => env[name] && env[name] !== 'http/json').map((name) => `${name}=${env[name]} is not supported: Keel exports OTLP as http/json`);
}

export async function createRecorder(opts: RecorderOptions): Promise<Recorder> {
  const env = process.env;
  const detected = await detectResources({ detectors: [envDetector] });
  const resource = resourceFromAttributes({ 'service.name': 'keel' }).merge(detected);
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318';
  // The network plugin's agent (a proxy, a client certificate) when it has one for the collector, else Node's own.
  const httpAgentOptions = async (protocol: string) => {
    const agent = opts.network()?.agentFor?.(endpoint);
    if (agent) return agent;
    const { Agent } = protocol === 'https:' ? await import('node:https') : await import('node:http');
    return new Agent({ keepAlive: true });
  };
  const meterProvider = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ httpAgentOptions }), exportIntervalMillis: exportInterval(env) })],
  });
  const tracerProvider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ httpAgentOptions }) })] });
  return createEventRecorder({
    meter: meterProvider.getMeter('keel'),
    tracer: tracerProvider.getTracer('keel'),
    logUserPrompts: opts.logUserPrompts,
    warnings: protocolWarnings(env),
    log: opts.log,
    async shutdown() {
      const results = await Promise.allSettled([meterProvider.shutdown(), tracerProvider.shutdown()]);
      for (const result of results) if (result.status === 'rejected') opts.log('warn', `telemetry export failed: ${String(result.reason)}`);
    },
  });
}
