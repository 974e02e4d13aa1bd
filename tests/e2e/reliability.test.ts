/**
 * Failures that must say what happened, and signals that must leave a clean session, through the built CLI.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectDir } from '../../plugins/session-store/paths.js';
import { callTool, say } from '../helpers/anthropic-server.js';
import { cleanEnv, collect, KEEL_BIN, ndjson, runKeel, spawnKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';
import { until } from '../helpers/until.js';

const prepare = useScriptedProjects();

/** Short watchdogs in the user's own config (always trusted), so a timeout happens within the test. */
function fastTimeouts(home: string): void {
  writeFileSync(path.join(home, 'agent.config.json'), JSON.stringify({ retry: { firstByteTimeoutMs: 300, maxRetries: 1, baseDelayMs: 1 } }));
}

describe('API failures through the CLI', () => {
  it('an endpoint that never answers ends with exit 1 and one line naming the timeout, not as a user abort', async () => {
    const { env, ws, server } = await prepare([{ fault: 'hang' }, { fault: 'hang' }]);
    fastTimeouts(ws.home);
    const run = await runKeel(['-p', 'hello'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^keel: Anthropic API timed out: no response within 0\.3 s \(2 attempts over \d+ s\)\n$/);
    // Under load an attempt may time out before its request reaches the server: at most two arrive.
    expect(server.messageRequests().length).toBeLessThanOrEqual(2);
  });

  it.each(['json', 'stream-json'])('with --output-format %s an API failure is in the result and one line on stderr', async (format) => {
    const { env, ws } = await prepare([{ status: 401, errorMessage: 'invalid x-api-key' }]);
    const run = await runKeel(['-p', 'hello', '--output-format', format], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^keel: invalid API key: the Anthropic API answered 401; [^\n]*\n$/);
    const result = ndjson(run.stdout).find((line) => line.type === 'result');
    expect(result).toMatchObject({ is_error: true, subtype: 'error_during_execution' });
  });
});

describe('SIGHUP (terminal closed, SSH dropped)', () => {
  it('stops the running shell command and its process group, frees the session lock and exits 129', async () => {
    const marker = `sleep ${(40 + Math.random()).toFixed(6)}`;
    const { env, ws } = await prepare([callTool('bash', { command: `${marker} & wait` }, 'toolu_sleep'), say('never reached')]);
    const child = spawnKeel(['-p', 'wait a while', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    const done = collect(child);
    const running = () => spawnSync('pgrep', ['-f', marker]).status === 0;
    await until(running, 'the shell command to run');
    const sessions = projectDir(ws.home, ws.dir);
    expect(readdirSync(sessions).filter((name) => name.endsWith('.lock'))).toHaveLength(1);
    child.kill('SIGHUP');
    const run = await done;
    expect(run.signal).toBeNull();
    expect(run.code).toBe(129);
    expect(running()).toBe(false);
    expect(readdirSync(sessions).filter((name) => name.endsWith('.lock'))).toEqual([]);
  });
});

/** bubblewrap can make a folder read-only for one process, even for root (chmod cannot). */
const canBwrap = spawnSync('bwrap', ['--bind', '/', '/', '--dev', '/dev', 'true']).status === 0;

describe('an unwritable KEEL_HOME', () => {
  it.skipIf(!canBwrap)('names the read-only file system (EROFS) and the path instead of ENOENT', async () => {
    const { env, ws } = await prepare([say('still answers')]);
    const child = spawn('bwrap', ['--bind', '/', '/', '--dev', '/dev', '--ro-bind', ws.home, ws.home, '--chdir', ws.dir, process.execPath, KEEL_BIN, '-p', 'hi'], {
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = await collect(child);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('still answers\n');
    expect(run.stderr).toContain(`cannot create ${projectDir(ws.home, ws.dir)}: ${ws.home} is on a read-only file system (EROFS)`);
    expect(run.stderr).not.toContain('ENOENT');
  });
});

describe('usage errors', () => {
  it('a mistyped flag is one keel: line with the suggestion, exit 2', async () => {
    const { env, ws, server } = await prepare([]);
    const run = await runKeel(['--prnt', 'hi'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("keel: unknown option '--prnt' (did you mean --print?)\n");
    const bad = await runKeel(['-p', 'hi', '--output-format', 'xml'], { cwd: ws.dir, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("keel: option '--output-format <format>' argument 'xml' is invalid. Allowed choices are text, json, stream-json.\n");
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('keel help prints the same help as keel --help and asks no model', async () => {
    const { env, ws, server } = await prepare([say('never')]);
    const help = await runKeel(['help'], { cwd: ws.dir, env });
    const flag = await runKeel(['--help'], { cwd: ws.dir, env });
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(flag.stdout);
    expect(help.stdout).toMatch(/^Usage: keel /);
    expect(server.messageRequests()).toHaveLength(0);
    expect(existsSync(projectDir(ws.home, ws.dir))).toBe(false);
  });
});
