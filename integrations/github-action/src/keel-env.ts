/**
 * Keel's environment, built from an allow list rather than inherited. A workflow often puts secrets in its job's
 * `env:` under names of its own (`DEPLOY_KEY: ${{ secrets.DEPLOY_KEY }}`); inherited, each would reach Keel and so
 * every command the model runs, where a prompt-injected model could print it. So Keel gets: what a process needs
 * to run (PATH, HOME, locale, temp folders, certificates, proxies), GitHub's documented non-secret context
 * variables, the variables Keel itself reads (its settings and its model provider's; the credentials among them are
 * kept from its commands by KEEL_SUBPROCESS_ENV_SCRUB), and the names the workflow lists in `allowed_env`.
 */

/** What any process needs to run as it would on the runner. */
const SYSTEM = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'TZ', 'LANG', 'LANGUAGE', 'TMPDIR', 'TMP', 'TEMP', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_RUNTIME_DIR', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];

/** The identity git records for the agent's commits (not GIT_CONFIG_*, which can carry an auth header). */
const GIT_IDENTITY = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL'];

/** The locale's categories by name (a prefix such as `LC_*` would let `LC_SECRET` through). */
const LOCALE = ['LC_ALL', 'LC_CTYPE', 'LC_COLLATE', 'LC_MESSAGES', 'LC_MONETARY', 'LC_NUMERIC', 'LC_TIME', 'LC_ADDRESS', 'LC_IDENTIFICATION', 'LC_MEASUREMENT', 'LC_NAME', 'LC_PAPER', 'LC_TELEPHONE'];

/** Proxies Keel needs to reach its model on a runner behind one; a proxy URL may hold a password (redacted). */
const PROXIES = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy'];

/**
 * GitHub's default variables that describe the run (docs: "Store information in variables", default environment
 * variables). Not GITHUB_TOKEN, not the runner's ACTIONS_* tokens, and not the file commands (GITHUB_ENV,
 * GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY): with those the agent could set variables and PATH
 * for the job's later steps, which may hold secrets.
 */
const GITHUB_CONTEXT = [
  'CI', 'GITHUB_ACTIONS', 'GITHUB_ACTION', 'GITHUB_ACTION_PATH', 'GITHUB_ACTION_REPOSITORY', 'GITHUB_ACTOR', 'GITHUB_ACTOR_ID', 'GITHUB_API_URL',
  'GITHUB_BASE_REF', 'GITHUB_EVENT_NAME', 'GITHUB_EVENT_PATH', 'GITHUB_GRAPHQL_URL', 'GITHUB_HEAD_REF', 'GITHUB_JOB', 'GITHUB_REF', 'GITHUB_REF_NAME',
  'GITHUB_REF_PROTECTED', 'GITHUB_REF_TYPE', 'GITHUB_REPOSITORY', 'GITHUB_REPOSITORY_ID', 'GITHUB_REPOSITORY_OWNER', 'GITHUB_REPOSITORY_OWNER_ID',
  'GITHUB_RETENTION_DAYS', 'GITHUB_RUN_ATTEMPT', 'GITHUB_RUN_ID', 'GITHUB_RUN_NUMBER', 'GITHUB_SERVER_URL', 'GITHUB_SHA', 'GITHUB_TRIGGERING_ACTOR',
  'GITHUB_WORKFLOW', 'GITHUB_WORKFLOW_REF', 'GITHUB_WORKFLOW_SHA', 'GITHUB_WORKSPACE', 'RUNNER_ARCH', 'RUNNER_DEBUG', 'RUNNER_ENVIRONMENT',
  'RUNNER_NAME', 'RUNNER_OS', 'RUNNER_TEMP', 'RUNNER_TOOL_CACHE',
];

/** Keel's own settings (README, "Configuration": the environment layer) and its switches. */
const KEEL_SETTINGS = ['KEEL_HOME', 'KEEL_MODEL', 'ANTHROPIC_MODEL', 'KEEL_SMALL_MODEL', 'ANTHROPIC_SMALL_FAST_MODEL', 'KEEL_PRESET', 'KEEL_MAX_TURNS', 'KEEL_DEBUG', 'NO_COLOR'];

/** The model providers' settings Keel reads; the credentials among them are in PROVIDER_CREDENTIALS too. */
const PROVIDER = [
  'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX', 'ANTHROPIC_BEDROCK_BASE_URL', 'ANTHROPIC_VERTEX_BASE_URL', 'ANTHROPIC_VERTEX_PROJECT_ID',
  'CLOUD_ML_REGION', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'OPENAI_BASE_URL', 'KEEL_ENABLE_TELEMETRY', 'CLAUDE_CODE_ENABLE_TELEMETRY',
  'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_SERVICE_NAME', 'OTEL_RESOURCE_ATTRIBUTES',
];

/** Credentials Keel reads itself: passed to Keel, kept from its commands (KEEL_SUBPROCESS_ENV_SCRUB), redacted. */
export const PROVIDER_CREDENTIALS = [
  'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_CUSTOM_HEADERS', 'ANTHROPIC_FOUNDRY_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN',
  'AWS_BEARER_TOKEN_BEDROCK', 'GOOGLE_APPLICATION_CREDENTIALS', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
  'OTEL_EXPORTER_OTLP_LOGS_HEADERS',
];

/** Never given to Keel, even when listed: the runner's tokens, the action's inputs, and the file commands. */
const REFUSED = new Set(['GITHUB_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'ACTIONS_ID_TOKEN_REQUEST_TOKEN', 'ACTIONS_ID_TOKEN_REQUEST_URL', 'GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY']);

/**
 * Variables that make Keel, the shells it starts or git run code of the workflow's choosing rather than carry data:
 * refused in allowed_env, since a value the job's `env:` builds from an event (a branch name, a title) would then run.
 * PATH is inherited from the runner as is; git's identity variables are passed, its config and command ones never.
 */
const CODE_RUNNING = /^(?:LD_[A-Z_]+|DYLD_[A-Z_]+|NODE_OPTIONS|NODE_PATH|BASH_ENV|ENV|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|PS4|IFS|PATH|GIT_(?:CONFIG\w*|SSH|SSH_COMMAND|ASKPASS|EXEC_PATH|PROXY_COMMAND|EXTERNAL_DIFF|PAGER|EDITOR|SEQUENCE_EDITOR|TEMPLATE_DIR|DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|CEILING_DIRECTORIES)|SSH_ASKPASS|EDITOR|VISUAL|PAGER)$/i;

const INHERITED = new Set([...SYSTEM, ...LOCALE, ...GIT_IDENTITY, ...PROXIES, ...GITHUB_CONTEXT, ...KEEL_SETTINGS, ...PROVIDER, ...PROVIDER_CREDENTIALS]);

/** The names in `allowed_env` (comma, space or newline separated), each checked. */
export function parseAllowedEnv(value: string): string[] {
  const names = value.split(/[\s,]+/).filter(Boolean);
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`allowed_env: "${name}" is not a variable name (letters, digits and _, comma-separated)`);
    if (CODE_RUNNING.test(name)) throw new Error(`allowed_env: ${name} is never given to Keel: it makes Keel, its shells or git run other code (loader, Node options, shell start-up files, git config and commands); set what the job needs in a step before`);
    // Windows runners read names without case: github_token is GITHUB_TOKEN there.
    if (REFUSED.has(name.toUpperCase()) || /^(INPUT_|ACTIONS_)/i.test(name)) throw new Error(`allowed_env: ${name} is never given to Keel (the runner's tokens, the action's inputs and the file commands GITHUB_ENV/GITHUB_PATH/GITHUB_OUTPUT/GITHUB_STATE/GITHUB_STEP_SUMMARY stay out)`);
  }
  return [...new Set(names)];
}

export interface KeelEnvironment {
  env: NodeJS.ProcessEnv;
  /** Values Keel now holds that may be secrets: redacted from everything posted and masked in the log. */
  secrets: string[];
  /** Names in `allowed_env` that the step's environment does not set. */
  missing: string[];
}

export interface KeelEnvOptions {
  allowed: string[];
  apiKey: string;
  baseUrl: string;
  /** The action's GitHub token: an allowed variable holding it is refused. */
  token: string;
}

/** The password of a proxy URL (`http://user:pass@host`), which Keel holds but must not post. */
function proxyPassword(value: string): string[] {
  try {
    const url = new URL(value);
    return [decodeURIComponent(url.password), url.password].filter(Boolean);
  } catch {
    return [];
  }
}

export function keelEnvironment(source: NodeJS.ProcessEnv, options: KeelEnvOptions): KeelEnvironment {
  const env: NodeJS.ProcessEnv = {};
  const secrets: string[] = [];
  const missing: string[] = [];
  for (const name of INHERITED) {
    const value = source[name];
    if (value === undefined) continue;
    env[name] = value;
    if (PROVIDER_CREDENTIALS.includes(name)) secrets.push(value);
    if (PROXIES.includes(name)) secrets.push(...proxyPassword(value));
  }
  for (const name of options.allowed) {
    const value = source[name];
    if (value === undefined) {
      missing.push(name);
      continue;
    }
    if (options.token && value.includes(options.token)) throw new Error(`allowed_env: ${name} holds the action's github_token, which is never given to Keel`);
    env[name] = value;
    // The workflow chose to show it to the model's commands, not to the page: each value counts as a secret.
    secrets.push(value);
  }
  // Last, so neither the runner's environment nor allowed_env can change them.
  env.KEEL_SUBPROCESS_ENV_SCRUB = '1';
  if (options.apiKey) env.ANTHROPIC_API_KEY = options.apiKey;
  else if (source.ANTHROPIC_API_KEY !== undefined) {
    env.ANTHROPIC_API_KEY = source.ANTHROPIC_API_KEY;
    secrets.push(source.ANTHROPIC_API_KEY);
  }
  if (options.baseUrl) env.ANTHROPIC_BASE_URL = options.baseUrl;
  return { env, secrets: secrets.filter(Boolean), missing };
}

/**
 * The names the action clears from its own environment block (see hideFromEnvironBlock): every variable whose value
 * Keel's commands do not get anyway, i.e. all but those Keel is given with the same value and does not scrub from its
 * commands. So the job's `env:` secrets, INPUT_* (the API key, the GitHub token), GITHUB_TOKEN and the runner's
 * ACTIONS_* tokens, and the credentials Keel holds for itself are not readable as /proc/<pid>/environ of the action.
 */
export function hiddenFromCommands(source: NodeJS.ProcessEnv, keel: NodeJS.ProcessEnv, scrubbed: (name: string) => boolean): (name: string) => boolean {
  return (name) => scrubbed(name) || keel[name] === undefined || keel[name] !== source[name];
}
