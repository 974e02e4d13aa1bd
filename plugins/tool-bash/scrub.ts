/**
 * Credentials Keel itself reads in-process (the model provider's keys, telemetry headers, cloud credentials, the
 * runner's OIDC tokens), which a command never needs. With `KEEL_SUBPROCESS_ENV_SCRUB=1` (or Claude Code's
 * `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1`) they are left out of every bash command's environment, so a
 * prompt-injected `echo $ANTHROPIC_API_KEY` finds nothing. The GitHub Action and fleet workers turn it on.
 */
const SCRUBBED = new Set([
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_CUSTOM_HEADERS',
  'ANTHROPIC_FOUNDRY_API_KEY',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_LOGS_HEADERS',
  'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_BEARER_TOKEN_BEDROCK',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'AZURE_CLIENT_SECRET',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_URL',
  'ACTIONS_RUNTIME_TOKEN',
  // A fleet run's session store (its URL may hold a password) and its cost broker: Keel's, not its commands'.
  'KEEL_REDIS_URL',
  'KEEL_FLEET_BROKER',
]);

const on = (value: string | undefined) => value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());

/** Whether commands run without Keel's credentials. */
export function scrubsCredentials(env: NodeJS.ProcessEnv): boolean {
  return on(env.KEEL_SUBPROCESS_ENV_SCRUB) || on(env.CLAUDE_CODE_SUBPROCESS_ENV_SCRUB);
}

export function isScrubbed(name: string): boolean {
  return SCRUBBED.has(name);
}
