/** The environment the action starts Keel with: an allow list, never the job's whole `env:`. */
import { describe, expect, it } from 'vitest';
import { hiddenFromCommands, keelEnvironment, parseAllowedEnv } from '../../integrations/github-action/src/keel-env.js';
import { isScrubbed } from '../../plugins/tool-bash/scrub.js';

const DEPLOY_KEY = 'deploy-CANARY-3e1f9a7c5b';

/** What a runner's step sees: GitHub's variables, the runner's tokens, and a job-level `env:` with secrets. */
const runnerEnv = (): NodeJS.ProcessEnv => ({
  PATH: '/usr/bin:/bin',
  HOME: '/home/runner',
  LANG: 'C.UTF-8',
  LC_CTYPE: 'C.UTF-8',
  LC_SECRET: 'lc-CANARY-0123456789',
  CI: 'true',
  GITHUB_REPOSITORY: 'octo/demo',
  GITHUB_SHA: 'abc123',
  GITHUB_WORKSPACE: '/home/runner/work/demo',
  GITHUB_ENV: '/home/runner/work/_temp/_runner_file_commands/set_env_1',
  GITHUB_PATH: '/home/runner/work/_temp/_runner_file_commands/add_path_1',
  GITHUB_OUTPUT: '/home/runner/work/_temp/_runner_file_commands/set_output_1',
  GITHUB_TOKEN: 'ghs_jobtoken0123456789',
  GITHUB_PAT: 'ghp_personalCANARY0123456789',
  ACTIONS_RUNTIME_TOKEN: 'runtime-token-0123456789',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidc-token-0123456789',
  INPUT_ANTHROPIC_API_KEY: 'sk-ant-input-0123456789',
  DEPLOY_KEY,
  NODE_AUTH_TOKEN: 'npm_CANARY0123456789',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-0123456789',
  HTTPS_PROXY: 'http://proxyuser:proxy%40pass99@proxy.internal:3128',
  NPM_CONFIG_REGISTRY: 'https://npm.internal/',
  KEEL_HOME: '/home/runner/.keel',
  GIT_AUTHOR_NAME: 'keel-bot',
  GIT_CONFIG_PARAMETERS: "'http.extraheader=AUTHORIZATION: basic CANARY'",
});

describe('the GitHub Action: Keel environment', () => {
  it('passes only the allow list: system, GitHub context, Keel and its provider; never a secret under another name, the tokens, the inputs or the file commands', () => {
    const { env, missing } = keelEnvironment(runnerEnv(), { allowed: [], apiKey: 'sk-ant-key-0123456789', baseUrl: '', token: 'ghs_jobtoken0123456789' });
    expect(Object.keys(env).sort()).toEqual(
      ['ANTHROPIC_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'CI', 'GIT_AUTHOR_NAME', 'GITHUB_REPOSITORY', 'GITHUB_SHA', 'GITHUB_WORKSPACE', 'HOME', 'HTTPS_PROXY', 'KEEL_HOME', 'KEEL_SUBPROCESS_ENV_SCRUB', 'LANG', 'LC_CTYPE', 'PATH'].sort(),
    );
    expect(env.KEEL_SUBPROCESS_ENV_SCRUB).toBe('1');
    expect(JSON.stringify(env)).not.toContain('CANARY');
    expect(missing).toEqual([]);
  });

  it('adds the variables listed in allowed_env, and counts their values, the credentials Keel reads and a proxy password as secrets', () => {
    const { env, secrets, missing } = keelEnvironment(runnerEnv(), { allowed: ['DEPLOY_KEY', 'NPM_CONFIG_REGISTRY', 'NOT_SET'], apiKey: '', baseUrl: 'http://127.0.0.1:9', token: 'ghs_jobtoken0123456789' });
    expect(env.DEPLOY_KEY).toBe(DEPLOY_KEY);
    expect(env.NPM_CONFIG_REGISTRY).toBe('https://npm.internal/');
    expect(env.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:9');
    expect(env.NODE_AUTH_TOKEN).toBeUndefined();
    expect(missing).toEqual(['NOT_SET']);
    expect(secrets).toEqual(expect.arrayContaining([DEPLOY_KEY, 'https://npm.internal/', 'aws-secret-0123456789', 'proxy@pass99', 'proxy%40pass99']));
  });

  it('allowed_env cannot switch the scrub off or replace the API key input', () => {
    const source = { ...runnerEnv(), KEEL_SUBPROCESS_ENV_SCRUB: '0', ANTHROPIC_API_KEY: 'sk-ant-job-env-0123456789' };
    const { env } = keelEnvironment(source, { allowed: ['KEEL_SUBPROCESS_ENV_SCRUB', 'ANTHROPIC_API_KEY'], apiKey: 'sk-ant-input-0123456789', baseUrl: '', token: '' });
    expect(env.KEEL_SUBPROCESS_ENV_SCRUB).toBe('1');
    expect(env.ANTHROPIC_API_KEY).toBe('sk-ant-input-0123456789');
  });

  it('refuses a variable that holds the action token, with the variable named', () => {
    const source = { ...runnerEnv(), GH_TOKEN: 'ghs_jobtoken0123456789' };
    expect(() => keelEnvironment(source, { allowed: ['GH_TOKEN'], apiKey: '', baseUrl: '', token: 'ghs_jobtoken0123456789' })).toThrow("allowed_env: GH_TOKEN holds the action's github_token");
  });

  it('parses allowed_env by commas, spaces and lines, and names a bad or refused entry', () => {
    expect(parseAllowedEnv(' FOO, BAR\nBAZ  FOO ')).toEqual(['FOO', 'BAR', 'BAZ']);
    expect(parseAllowedEnv('')).toEqual([]);
    expect(() => parseAllowedEnv('FOO,BAR-BAZ')).toThrow('allowed_env: "BAR-BAZ" is not a variable name');
    expect(() => parseAllowedEnv('$FOO')).toThrow('allowed_env: "$FOO" is not a variable name');
    for (const name of ['GITHUB_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'ACTIONS_ID_TOKEN_REQUEST_URL', 'INPUT_GITHUB_TOKEN', 'GITHUB_ENV', 'GITHUB_PATH']) {
      expect(() => parseAllowedEnv(`FOO,${name}`)).toThrow(`allowed_env: ${name} is never given to Keel`);
    }
  });

  it('refuses the runner tokens under any casing (Windows reads names without case) and every ACTIONS_* name', () => {
    for (const name of ['github_token', 'Github_Token', 'actions_runtime_token', 'ACTIONS_CACHE_URL', 'github_env', 'input_anthropic_api_key']) {
      expect(() => parseAllowedEnv(name)).toThrow(`allowed_env: ${name} is never given to Keel`);
    }
  });

  it('refuses variables that make Keel, its shells or git run other code, by name in any case', () => {
    for (const name of ['LD_PRELOAD', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'NODE_OPTIONS', 'node_options', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0', 'GIT_CONFIG_PARAMETERS', 'GIT_SSH_COMMAND', 'GIT_ASKPASS', 'PATH', 'GIT_EXEC_PATH']) {
      expect(() => parseAllowedEnv(`JAVA_HOME,${name}`)).toThrow(`allowed_env: ${name} is never given to Keel: it makes Keel, its shells or git run other code`);
    }
    expect(parseAllowedEnv('JAVA_HOME,GIT_AUTHOR_NAME,NODE_ENV')).toEqual(['JAVA_HOME', 'GIT_AUTHOR_NAME', 'NODE_ENV']);
    // Not listed, none of them reaches Keel from the job's env:.
    const source = { ...runnerEnv(), LD_PRELOAD: '/tmp/x.so', NODE_OPTIONS: '--require /tmp/x.js', BASH_ENV: '/tmp/x.sh', GIT_CONFIG_COUNT: '1', GIT_SSH_COMMAND: 'sh -c x' };
    const { env } = keelEnvironment(source, { allowed: [], apiKey: '', baseUrl: '', token: '' });
    for (const name of ['LD_PRELOAD', 'NODE_OPTIONS', 'BASH_ENV', 'GIT_CONFIG_COUNT', 'GIT_SSH_COMMAND', 'GIT_CONFIG_PARAMETERS']) expect(env[name]).toBeUndefined();
  });

  it("the action clears from its own environ block every variable whose value Keel's commands do not get", () => {
    const source = { ...runnerEnv(), ANTHROPIC_API_KEY: 'sk-ant-job-0123456789', SHARED: 'shared', ANTHROPIC_BASE_URL: 'https://job.example' };
    const { env } = keelEnvironment(source, { allowed: ['SHARED'], apiKey: 'sk-ant-input-0123456789', baseUrl: 'https://input.example', token: 'ghs_jobtoken0123456789' });
    const hidden = hiddenFromCommands(source, env, isScrubbed);
    const cleared = Object.keys(source).filter(hidden).sort();
    expect(cleared).toEqual(
      [
        'ACTIONS_ID_TOKEN_REQUEST_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'AWS_SECRET_ACCESS_KEY', 'DEPLOY_KEY', 'GITHUB_ENV', 'GITHUB_OUTPUT', 'GITHUB_PAT', 'GITHUB_PATH',
        'GITHUB_TOKEN', 'GIT_CONFIG_PARAMETERS', 'INPUT_ANTHROPIC_API_KEY', 'LC_SECRET', 'NODE_AUTH_TOKEN', 'NPM_CONFIG_REGISTRY',
      ].sort(),
    );
    // What the commands see anyway stays: the system, GitHub's context, Keel's settings, an allowed variable.
    for (const name of ['PATH', 'HOME', 'LANG', 'GITHUB_REPOSITORY', 'KEEL_HOME', 'SHARED', 'HTTPS_PROXY']) expect(hidden(name)).toBe(false);
  });
});
