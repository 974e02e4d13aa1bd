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
  /** The `network` service, if a plugin offers one. */
  network(): Promise<{ agentFor?(url: string): http.Agent | undefined } | undefined>;
  log(level: 'debug' | 'warn', message: string): void;
}

/**
 * Milliseconds between metric exports (OTEL_METRIC_EXPORT_INTERVAL, else 60 s) and per export (OTEL_METRIC_EXPORT_TIMEOUT,
 * else 30 s), the timeout no longer than the interval, as the reader requires.
 */
function exportTiming(env: NodeJS.ProcessEnv): { exportIntervalMillis: number; exportTimeoutMillis: number } {
  const read = (name: string, fallback: number) => {
    const value = Number(env[name]);
    return Number.isInteger(value) && value > 0 ? value : fallback;
  };
  const exportIntervalMillis = read('OTEL_METRIC_EXPORT_INTERVAL', 60_000);
  return { exportIntervalMillis, exportTimeoutMillis: Math.min(read('OTEL_METRIC_EXPORT_TIMEOUT', 30_000), exportIntervalMillis) };
}

/** Keel's exporters send OTLP as JSON over HTTP; other protocols are not built in. */
function protocolWarnings(env: NodeJS.ProcessEnv): string[] {
  const names = ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'];
  return names.filter((name) => env[name] && env[name] !== 'http/json').map((name) => `${name}=${env[name]} is not supported: Keel exports OTLP as http/json`);
}

/** The span batching from the OTEL_BSP_* variables (the SDK's defaults for those unset or not positive integers). */
function batchOptions(env: NodeJS.ProcessEnv) {
  const read = (name: string) => {
    const value = Number(env[name]);
    return Number.isInteger(value) && value > 0 ? value : undefined;
  };
  const options = {
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
  };
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

export async function createRecorder(opts: RecorderOptions): Promise<Recorder> {
  const env = process.env;
  const detected = await detectResources({ detectors: [envDetector] });
  const resource = resourceFromAttributes({ 'service.name': 'keel' }).merge(detected);
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318';
  // The network plugin's agent (a proxy, a client certificate) when it offers one; else the exporters' own, which
  // honour OTEL_EXPORTER_OTLP_CERTIFICATE / _CLIENT_CERTIFICATE / _CLIENT_KEY.
  const network = await opts.network();
  const agentFor = network?.agentFor?.bind(network);
  const httpAgentOptions = agentFor
    ? async (protocol: string) => {
        const agent = agentFor(endpoint);
        if (agent) return agent;
        const { Agent } = protocol === 'https:' ? await import('node:https') : await import('node:http');
        return new Agent({ keepAlive: true });
      }
    : undefined;
  const exporterOptions = httpAgentOptions ? { httpAgentOptions } : {};
  const meterProvider = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(exporterOptions), ...exportTiming(env) })],
  });
  const tracerProvider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(exporterOptions), ...batchOptions(env) })] });
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
