/**
 * A reader of stdout that goes away (`keel -p … | head`, an SDK host whose reader died), through the built CLI:
 * no EPIPE stack trace; the turn aborts, running tools are killed, the session lock is freed, one line on stderr,
 * exit 141.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { projectDir } from '../../plugins/session-store/paths.js';
import { callTool, say } from '../helpers/anthropic-server.js';
import { cleanEnv, collect, KEEL_BIN, spawnKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';
import { until } from '../helpers/until.js';

const prepare = useScriptedProjects();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
const GONE = /^keel: the reader of stdout went away \(EPIPE\): the run was stopped and its tools ended\n$/;

/** A shell command that waits for `go`, then writes `side-effect`; `marker` finds its process. */
function waitingCommand(): { command: string; marker: string } {
  const marker = `keel-reader-${process.pid}-${Math.random().toString(36).slice(2)}`;
  return { marker, command: `: ${marker}; while [ ! -e go ]; do sleep 0.05; done; echo late > side-effect` };
}

function track(child: ChildProcess): ChildProcess {
  children.push(child);
  return child;
}

const running = (marker: string) => spawnSync('pgrep', ['-f', marker]).status === 0;

/** After keel is gone the command could still finish its side effect: let it try, then check it did not. */
async function expectNoSideEffect(dir: string, marker: string): Promise<void> {
  expect(running(marker)).toBe(false);
  writeFileSync(path.join(dir, 'go'), '');
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(existsSync(path.join(dir, 'side-effect'))).toBe(false);
}

const locks = (home: string, dir: string) => readdirSync(projectDir(home, dir)).filter((name) => name.endsWith('.lock'));

describe('headless: the reader of stdout goes away', () => {
  it('stream-json: the reader leaves after the first line; the tool call never finishes its side effect, exit 141', async () => {
    const { command, marker } = waitingCommand();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The answer waits until the reader has gone, so the next line Keel writes (the tool call) meets a closed pipe.
    const { env, ws } = await prepare([{ ...callTool('bash', { command }, 'toolu_wait'), beforeEvent: (ctx) => (ctx.index === 0 ? released : undefined) }, say('never reached')]);
    const child = track(spawnKeel(['-p', 'run it', '--output-format', 'stream-json', '--permission-mode', 'auto'], { cwd: ws.dir, env }));
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const lines = createInterface({ input: child.stdout! });
    const first = await new Promise<string>((resolve) => lines.once('line', resolve));
    expect(JSON.parse(first)).toMatchObject({ type: 'system', subtype: 'init' });
    lines.close();
    child.stdout!.destroy();
    release();
    expect(await exited).toBe(141);
    expect(stderr).toMatch(GONE);
    expect(locks(ws.home, ws.dir)).toEqual([]);
    await expectNoSideEffect(ws.dir, marker);
  });

  it.each(['text', 'json'])('%s: a reader gone before the answer is written ends with exit 141 and one line, no stack trace', async (format) => {
    const { env, ws } = await prepare([say('an answer nobody reads')]);
    const child = spawnKeel(['-p', 'hello', '--output-format', format], { cwd: ws.dir, env });
    child.stdout!.destroy();
    const run = await collect(child);
    expect(run.code).toBe(141);
    expect(run.stderr).toMatch(GONE);
    expect(locks(ws.home, ws.dir)).toEqual([]);
  });
});

describe('SDK mode: the host reader dies', () => {
  it('while a tool runs: the turn aborts, the tool process is killed, the lock is freed, exit 141', async () => {
    const { command, marker } = waitingCommand();
    const { env, ws } = await prepare([callTool('bash', { command }, 'toolu_wait'), say('never reached')]);
    const args = ['--input-format', 'stream-json', '--output-format', 'stream-json', '--permission-mode', 'auto'];
    const child = track(spawn(KEEL_BIN, args, { cwd: ws.dir, env: cleanEnv(env), stdio: 'pipe' }));
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stdin!.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: 'run it' } })}\n`);
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve) => lines.on('line', (line) => JSON.parse(line).type === 'assistant' && resolve()));
    await until(() => running(marker), 'the tool process');
    expect(locks(ws.home, ws.dir)).toHaveLength(1);
    lines.close();
    child.stdout!.destroy();
    // The host asks something: Keel's answer meets the closed pipe while the tool runs.
    child.stdin!.write(`${JSON.stringify({ type: 'control_request', request_id: 'r1', request: { subtype: 'set_model', model: 'claude-sonnet-4-5' } })}\n`);
    expect(await exited).toBe(141);
    expect(stderr).toMatch(GONE);
    expect(locks(ws.home, ws.dir)).toEqual([]);
    await expectNoSideEffect(ws.dir, marker);
  });
});
