import { z } from 'zod';
import { definePlugin, Stage, type AgentEvent, type Kernel } from '../../kernel/index.js';
import type { Recorder, TelemetryEvent } from './recorder.js';

export interface TelemetrySettings {
  /** Export metrics and traces over OTLP/HTTP (otherwise KEEL_ENABLE_TELEMETRY=1 or CLAUDE_CODE_ENABLE_TELEMETRY=1). */
  enabled?: boolean;
  /** Put prompt text and tool inputs in spans (otherwise OTEL_LOG_USER_PROMPTS=1); off by default. */
  logUserPrompts?: boolean;
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** OpenTelemetry metrics and traces, off unless switched on; see README "Telemetry". */
    telemetry?: TelemetrySettings;
  }
}

const telemetryConfig = z.object({ enabled: z.boolean(), logUserPrompts: z.boolean() }).partial().strict();

const NAME = 'telemetry';
const TRUE = /^(1|true|yes|on)$/i;

/** On when config `telemetry.enabled` says so, else when KEEL_ENABLE_TELEMETRY or CLAUDE_CODE_ENABLE_TELEMETRY is set. */
export function telemetryEnabled(config: TelemetrySettings | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (config?.enabled !== undefined) return config.enabled;
  return TRUE.test(env.KEEL_ENABLE_TELEMETRY ?? '') || TRUE.test(env.CLAUDE_CODE_ENABLE_TELEMETRY ?? '');
}

/**
 * OpenTelemetry metrics and traces of the agent's work, exported over OTLP/HTTP as the standard OTEL_* variables say.
 * Off by default: then it taps nothing and loads nothing. On, it records the kernel's events (and the start of each
 * model request) from the start, and hands them to the recorder (cold.ts: the OpenTelemetry SDK and exporters) once
 * that has loaded; the recorder flushes before the process exits.
 */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { telemetry: telemetryConfig },
  apply(kernel) {
    const parsed = telemetryConfig.safeParse(kernel.config.telemetry ?? {});
    const settings = parsed.success ? parsed.data : {};
    if (!telemetryEnabled(settings)) return;
    const logUserPrompts = settings.logUserPrompts ?? TRUE.test(process.env.OTEL_LOG_USER_PROMPTS ?? '');
    const pending: TelemetryEvent[] = [];
    let recorder: Recorder | undefined;
    const record = (event: TelemetryEvent) => (recorder ? recorder.record(event) : pending.push(event));
    const loading = import('./cold.js')
      .then(({ createRecorder }) => createRecorder({ logUserPrompts, network: () => networkService(kernel), log: (level, message) => kernel.log(level, message, NAME) }))
      .then((made) => {
        recorder = made;
        for (const event of pending.splice(0)) made.record(event);
        return made;
      })
      .catch((err: unknown) => {
        kernel.log('warn', `telemetry is off: ${err instanceof Error ? err.message : String(err)}`, NAME);
        return undefined;
      });

    kernel.hooks.event.tap(NAME, (event: AgentEvent) => record({ at: Date.now(), event }));
    // Marks when each model request starts; answers nothing.
    kernel.hooks.query.tapPromise({ name: NAME, stage: Stage.FIRST }, async (request) => {
      record({ at: Date.now(), event: { type: 'query_start', tier: request.tier, model: request.model } });
      return undefined;
    });

    let flushed = false;
    process.on('beforeExit', () => {
      if (flushed) return;
      flushed = true;
      // Keeps the process alive until the last metrics and spans are sent (or the exporters time out).
      void loading.then((made) => made?.shutdown());
    });
  },
}));

/**
 * An agent through the `network` plugin (a proxy tunnel) when a proxy is set; the collector is not sent the client
 * certificate, which is for the model API and MCP servers.
 */
async function networkService(kernel: Kernel): Promise<{ agentFor(url: string): import('node:http').Agent | undefined } | undefined> {
  const network = await kernel.services.get('network')?.load();
  if (!network) return undefined;
  return { agentFor: (url) => (network.requestOptions(new URL(url), {}).agent || undefined) as import('node:http').Agent | undefined };
}
