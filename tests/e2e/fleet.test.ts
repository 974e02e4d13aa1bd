/**
 * keel fleet end to end: a real Redis per test (redis-server, AOF on), the built binary as submitter and workers,
 * the scripted Anthropic server as the model. BullMQ's state is read with BullMQ itself.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, plainMessages, say, startAnthropicServer, type RecordedRequest, type ScriptedServer, type ScriptedTurn } from '../helpers/anthropic-server.js';
import { collect, runKeel, spawnKeel, type KeelRun } from '../helpers/cli.js';
import { freePort, startRedis, type TestRedis } from '../helpers/redis.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';
import { until } from '../helpers/until.js';
import { scanMemory } from '../helpers/environ-walk.js';

/** Polls `check` until it gives a value (a worker's turn on a loaded machine can take a while). */
const waitFor = <T>(what: string, check: () => Promise<T | undefined | false>) => until(check, what, { timeoutMs: 90_000, everyMs: 100 });

const RESUME_PROMPT_START = 'Your previous run of this task was interrupted';

interface Fleet {
  redis: TestRedis;
  server: ScriptedServer;
  ws: Workspace;
  env: Record<string, string>;
  workers: Worker[];
  queue: Queue;
  conn: Redis;
}

let fleet: Fleet | undefined;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { type?: string; text?: string }) => (b.type === 'text' ? b.text : '')).join('');
  return '';
}
/** The task a request belongs to: the name in its first user message ("task <name>: …"). */
const taskOf = (request: RecordedRequest): string => /task ([\w-]+):/.exec(textOf(request.body.messages[0].content))?.[1] ?? '?';
const lastText = (request: RecordedRequest): string => textOf(request.body.messages.at(-1).content);

async function setUp(route: (request: RecordedRequest) => ScriptedTurn | undefined, fleetConfig: Record<string, unknown> = {}): Promise<Fleet> {
  const redis = await startRedis();
  const server = await startAnthropicServer([], { route });
  const ws = makeWorkspace();
  execFileSync('git', ['init', '--quiet', ws.dir]);
  ws.write('README.md', 'a project\n');
  execFileSync('git', ['-C', ws.dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '--allow-empty', '-m', 'start']);
  execFileSync('git', ['-C', ws.dir, 'add', '-A']);
  execFileSync('git', ['-C', ws.dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'readme']);
  // Short locks and stalled checks keep a take-over within seconds.
  const config = {
    fleet: { redisUrl: redis.url, workDir: path.join(path.dirname(ws.dir), 'work'), lockDurationMs: 2_000, stalledIntervalMs: 500, maxStalledCount: 5, ...fleetConfig },
  };
  writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify(config));
  const env = { KEEL_HOME: ws.home, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key' };
  const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  conn.on('error', () => undefined);
  const queue = new Queue('keel-fleet', { connection: conn });
  queue.on('error', () => undefined);
  fleet = { redis, server, ws, env, workers: [], queue, conn };
  return fleet;
}

afterEach(async () => {
  const f = fleet;
  fleet = undefined;
  if (!f) return;
  for (const worker of f.workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  await Promise.allSettled(f.workers.map((w) => w.done));
  await f.queue.close().catch(() => undefined);
  f.conn.disconnect();
  await f.server.close();
  await f.redis.cleanup();
  f.ws.cleanup();
});

interface Worker {
  child: ChildProcess;
  done: Promise<KeelRun>;
  /** What it has written to stderr so far. */
  stderr(): string;
}

function startWorker(f: Fleet, args: string[] = []): Worker {
  const child = spawnKeel(['fleet', 'work', ...args], { cwd: f.ws.dir, env: f.env });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const worker = { child, done: collect(child, 170_000), stderr: () => stderr };
  f.workers.push(worker);
  return worker;
}

function submit(f: Fleet, tasks: Array<Record<string, unknown>>): Promise<KeelRun> {
  const file = f.ws.write('tasks.jsonl', tasks.map((t) => JSON.stringify(t)).join('\n') + '\n');
  return runKeel(['fleet', 'submit', file], { cwd: f.ws.dir, env: f.env });
}

/** The processes whose parent is `pid` (read from /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // The field after the command (in parentheses, which may hold spaces) and the state is the parent's pid.
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

const finished = (f: Fleet, n: number) =>
  waitFor(`${n} finished tasks`, async () => {
    const counts = await f.queue.getJobCounts('completed', 'failed');
    return counts.completed + counts.failed >= n ? counts : undefined;
  });

async function results(f: Fleet): Promise<any[]> {
  const run = await runKeel(['fleet', 'results', '--json'], { cwd: f.ws.dir, env: f.env });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/** Two turns: write out-<name>.txt, then say done. */
function twoTurns(request: RecordedRequest): ScriptedTurn {
  const name = taskOf(request);
  return request.body.messages.length === 1 ? callTool('write_file', { path: `out-${name}.txt`, content: `result ${name}\n` }) : say(`done ${name}`);
}

describe('keel fleet', () => {
  it('runs 20 tasks on 3 worker processes, each exactly once, with its result and its patch', async () => {
    const f = await setUp(twoTurns);
    const tasks = Array.from({ length: 20 }, (_, i) => ({ id: `t${i}`, cwd: '.', prompt: `task t${i}: write your file`, permissionMode: 'edits' }));
    const queued = await submit(f, tasks);
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);
    for (let i = 0; i < 3; i++) startWorker(f, ['--concurrency', '2']);
    const counts = await finished(f, 20);
    expect(counts).toEqual({ completed: 20, failed: 0 });

    const lines = await results(f);
    expect(lines.map((l) => l.id).sort()).toEqual(tasks.map((t) => t.id).sort());
    for (const line of lines) {
      expect(line).toMatchObject({ conclusion: 'success', isError: false, turns: 2, result: `done ${line.id}` });
      expect(line.patch).toContain(`+++ b/out-${line.id}.txt`);
      expect(line.patch).toContain(`+result ${line.id}`);
    }
    // Exactly once: each task's first and second turn were asked once.
    const requests = f.server.messageRequests();
    for (const task of tasks) {
      const mine = requests.filter((r) => taskOf(r) === task.id);
      expect(mine.map((r) => r.body.messages.length)).toEqual([1, 3]);
    }
    // The checkouts are gone, and the user's repository has no worktree left.
    expect(execFileSync('git', ['-C', f.ws.dir, 'worktree', 'list']).toString().trim().split('\n')).toHaveLength(1);
    // status agrees
    const status = await runKeel(['fleet', 'status', '--json'], { cwd: f.ws.dir, env: f.env });
    expect(JSON.parse(status.stdout)).toMatchObject({ counts: { completed: 20, failed: 0, active: 0, waiting: 0 } });
  }, 180_000);

  it('a worker killed with kill -9 mid-task: another takes the task over and resumes its session, earlier turns not asked again', async () => {
    let held: RecordedRequest | undefined;
    const f = await setUp((request) => {
      const name = taskOf(request);
      if (name !== 'slow') return twoTurns(request);
      const n = request.body.messages.length;
      if (n === 1) return callTool('write_file', { path: 'a.txt', content: 'first\n' });
      if (n === 3) return callTool('write_file', { path: 'b.txt', content: 'second\n' });
      if (!lastText(request).startsWith(RESUME_PROMPT_START)) {
        // The third turn of the first run: held until its run goes away (its worker is killed).
        held = request;
        return { content: [{ type: 'text', text: 'never sent' }], beforeEvent: ({ closed }) => closed };
      }
      return say('done slow');
    });
    expect((await submit(f, [{ id: 'slow', cwd: '.', prompt: 'task slow: two files', permissionMode: 'edits' }])).code).toBe(0);
    const first = startWorker(f);
    const second = startWorker(f);
    await waitFor('the third turn', async () => held);
    const job = await f.queue.getJob('slow');
    const victim = [first, second].find((w) => (job!.progress as { worker?: string }).worker?.endsWith(`:${w.child.pid}`))!;
    expect(victim).toBeDefined();
    victim.child.kill('SIGKILL');
    // The run the dead worker left behind stops by itself: its request goes away unanswered.
    expect(await held!.finished).toBe('closed-early');
    await finished(f, 1);
    const [line] = await results(f);
    const survivor = victim === first ? second : first;
    expect(line).toMatchObject({ id: 'slow', conclusion: 'success', result: 'done slow', worker: expect.stringMatching(new RegExp(`:${survivor.child.pid}$`)) });
    // The work in progress came along: the final patch has both files.
    expect(line.patch).toContain('+first');
    expect(line.patch).toContain('+second');
    const mine = f.server.messageRequests().filter((r) => taskOf(r) === 'slow');
    // Turns 1 and 2 were asked once; the resumed run sent the history it had, then asked on.
    expect(mine.map((r) => r.body.messages.length)).toEqual([1, 3, 5, 6]);
    const resumed = mine[3].body.messages;
    expect(textOf(resumed[5].content)).toContain(RESUME_PROMPT_START);
    expect(plainMessages(resumed.slice(0, 5))).toEqual(plainMessages(mine[2].body.messages));
    // The task's Redis user was made anew for the resumed run (the dead worker's run lost its password) and is gone.
    expect(await f.conn.call('ACL', 'USERS')).toEqual(['default']);
  }, 180_000);

  it('a run killed before its first model turn: the retry starts the task afresh under the same session, and the result is the answer', async () => {
    let held: RecordedRequest | undefined;
    const f = await setUp((request) => {
      if (!held) {
        // The first run's first request is never answered: the run is killed while it waits.
        held = request;
        return { content: [{ type: 'text', text: 'never sent' }], beforeEvent: ({ closed }) => closed };
      }
      return say('done fragile');
    });
    expect((await submit(f, [{ id: 'fragile', cwd: '.', prompt: 'task fragile: answer', permissionMode: 'edits' }])).code).toBe(0);
    const worker = startWorker(f);
    await until(async () => held, 'the first request');
    const [run] = await until(async () => {
      const runs = childrenOf(worker.child.pid!).filter((pid) => commandLine(pid).includes('--session-id'));
      return runs.length ? runs : undefined;
    }, 'the run process');
    process.kill(run, 'SIGKILL');
    await finished(f, 1);
    const [line] = await results(f);
    expect(line).toMatchObject({ id: 'fragile', conclusion: 'success', result: 'done fragile' });
    const job = (await f.queue.getJob('fragile'))!;
    expect(job.attemptsMade).toBe(2);
    expect(line.sessionId).toBe(job.data.task.sessionId);
    // The second run was given the task, not "continue": its request holds the prompt alone.
    const requests = f.server.messageRequests();
    expect(requests.map((r) => r.body.messages.length)).toEqual([1, 1]);
    expect(textOf(requests[1].body.messages[0].content)).toContain('task fragile: answer');
    // Said in the worker's log and the task's own.
    expect(worker.stderr()).toContain(`task fragile: its last run stopped before it recorded a model turn (`);
    expect(worker.stderr()).toContain(`): starting afresh under session ${line.sessionId}`);
    const logs = await f.queue.getJobLogs('fragile');
    expect(logs.logs).toEqual([expect.stringContaining('starting afresh under session')]);
    // One session under the task's prefix, with one header: the stream of the run that died is gone.
    const stream = `keel-fleet:keel-fleet:run:${line.sessionId}:session:${line.sessionId}`;
    const kinds = (await f.conn.xrange(stream, '-', '+')).map(([, fields]) => JSON.parse(fields[1]).type);
    expect(kinds.filter((k) => k === 'header')).toHaveLength(1);
  }, 180_000);

  it('a task marked started whose session was never written, or holds only a header, starts afresh: it never asks to resume what is not there', async () => {
    const f = await setUp((request) => say(`done ${taskOf(request)}`));
    const session = (n: number) => `0b7a1c9e-3f2d-4e5a-9b8c-7d6e5f4a3b2${n}`;
    const prefix = (id: string) => `keel-fleet:keel-fleet:run:${id}:`;
    // What a run that died before its first record leaves: the job marked started, and no stream or a bare header.
    const ghost = { id: 'ghost', cwd: f.ws.dir, prompt: 'task ghost: answer', sessionId: session(1) };
    const halfway = { id: 'halfway', cwd: f.ws.dir, prompt: 'task halfway: answer', sessionId: session(2) };
    const header = { type: 'header', version: 1, id: halfway.sessionId, cwd: '/gone/checkout', projectRoot: '/gone/checkout', createdAt: 1 };
    await f.conn.xadd(`${prefix(halfway.sessionId)}session:${halfway.sessionId}`, '*', 'r', JSON.stringify(header));
    await f.conn.zadd(`${prefix(halfway.sessionId)}sessions:project:/gone/checkout`, 1, halfway.sessionId);
    for (const task of [ghost, halfway]) {
      await f.queue.add('task', { task, submittedAt: Date.now(), started: true }, { jobId: task.id, attempts: 3, removeOnComplete: false, removeOnFail: false });
    }
    const worker = startWorker(f);
    await finished(f, 2);
    const lines = await results(f);
    for (const task of [ghost, halfway]) {
      expect(lines.find((l) => l.id === task.id)).toMatchObject({ conclusion: 'success', result: `done ${task.id}`, sessionId: task.sessionId });
      // Each ran once, on its first attempt, with its prompt.
      expect((await f.queue.getJob(task.id))!.attemptsMade).toBe(1);
      const mine = f.server.messageRequests().filter((r) => taskOf(r) === task.id);
      expect(mine.map((r) => r.body.messages.length)).toEqual([1]);
    }
    expect(worker.stderr()).toContain('task ghost: its last run stopped before it recorded a model turn (no session was written)');
    expect(worker.stderr()).toContain('task halfway: its last run stopped before it recorded a model turn (its session holds no model turn (1 entry, removed))');
    const kinds = (await f.conn.xrange(`${prefix(halfway.sessionId)}session:${halfway.sessionId}`, '-', '+')).map(([, fields]) => JSON.parse(fields[1]));
    expect(kinds.filter((r) => r.type === 'header')).toEqual([expect.not.objectContaining({ cwd: '/gone/checkout' })]);
    expect(await f.conn.zscore(`${prefix(halfway.sessionId)}sessions:project:/gone/checkout`, halfway.sessionId)).toBeNull();
  }, 120_000);

  it('survives a restart of Redis mid-run: every task finishes', async () => {
    const f = await setUp(twoTurns);
    const tasks = Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, cwd: '.', prompt: `task r${i}: write`, permissionMode: 'edits' }));
    expect((await submit(f, tasks)).code).toBe(0);
    startWorker(f);
    startWorker(f);
    await waitFor('3 finished tasks', async () => (await f.queue.getCompletedCount().catch(() => 0)) >= 3);
    await f.redis.restart();
    const counts = await finished(f, 10);
    expect(counts).toEqual({ completed: 10, failed: 0 });
    const lines = await results(f);
    expect(lines.map((l) => l.id).sort()).toEqual(tasks.map((t) => t.id).sort());
    for (const line of lines) expect(line.conclusion).toBe('success');
  }, 180_000);

  it('holds the fleet-wide request rate across workers (counted from the model server\'s timestamps)', async () => {
    // 120 requests a minute: one every 500 ms, whichever worker asks.
    const f = await setUp(
      (request) => {
        const n = request.body.messages.length;
        return n < 5 ? callTool('write_file', { path: `f${n}.txt`, content: `${n}\n` }) : say('done');
      },
      { requestsPerMinute: 120 },
    );
    const tasks = Array.from({ length: 6 }, (_, i) => ({ id: `q${i}`, cwd: '.', prompt: `task q${i}: three turns`, permissionMode: 'edits' }));
    expect((await submit(f, tasks)).code).toBe(0);
    for (let i = 0; i < 3; i++) startWorker(f, ['--concurrency', '2']);
    expect(await finished(f, 6)).toEqual({ completed: 6, failed: 0 });
    const times = f.server.messageRequests().map((r) => r.receivedAt).sort((a, b) => a - b);
    expect(times).toHaveLength(18);
    // Tokens leave 500 ms apart, so any 2 s holds at most 5 requests (4 gaps); six runs unpaced send far more.
    for (const start of times) expect(times.filter((t) => t >= start && t < start + 2_000).length).toBeLessThanOrEqual(5);
    const status = await runKeel(['fleet', 'status'], { cwd: f.ws.dir, env: f.env });
    expect(status.stdout).toContain('rate limit: 120 requests/min fleet-wide');
  }, 180_000);

  it("each task's run reaches Redis as its own user: a prompt-injected run that reads its credentials cannot touch another task's session, the queue or the broker", async () => {
    let leak!: (lines: string) => void;
    const leaked = new Promise<string>((resolve) => (leak = resolve));
    let probe!: () => void;
    const probed = new Promise<void>((resolve) => (probe = resolve));
    const f = await setUp(
      (request) => {
        const first = textOf(request.body.messages[0].content);
        if (first.startsWith('CHILD')) return say('child done');
        if (taskOf(request) !== 'spy') return twoTurns(request);
        const n = request.body.messages.length;
        // The injected model reads its run's environment block and its worker's: both have cleared their credentials.
        if (n === 1) {
          return callTool('bash', {
            command: [
              'echo "run=$PPID"',
              "tr '\\0' '\\n' < /proc/$PPID/environ | grep -E '^KEEL_REDIS_(URL|SESSION_PREFIX)='",
              "w=$(awk '/^PPid:/ { print $2 }' /proc/$PPID/status); echo \"worker=$(tr '\\0' ' ' < /proc/$w/cmdline)\"",
              "tr '\\0' '\\n' < /proc/$w/environ | grep -E '^(ANTHROPIC_API_KEY|KEEL_REDIS_URL|KEEL_HOME)=' | sed 's/^/worker /'",
            ].join('; '),
          });
        }
        if (n === 3) {
          const result = request.body.messages[2].content[0];
          leak(typeof result.content === 'string' ? result.content : textOf(result.content));
          // A sub-agent of the task records its own session under the task's prefix too.
          return { ...callTool('agent', { task: 'CHILD say something' }, 'toolu_child'), beforeEvent: () => probed };
        }
        return say('done spy');
      },
      { requestsPerMinute: 6_000 },
    );
    expect((await submit(f, [
      { id: 'other', cwd: '.', prompt: 'task other: write', permissionMode: 'edits' },
      { id: 'spy', cwd: '.', prompt: 'task spy: look around', permissionMode: 'auto' },
    ])).code).toBe(0);
    startWorker(f);
    const env = Object.fromEntries((await leaked).trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    expect(env.KEEL_REDIS_URL).toBeUndefined();
    expect(env.KEEL_REDIS_SESSION_PREFIX).toBeTruthy();
    // The worker's block was read (its KEEL_HOME is there) and holds no API key.
    expect(env.worker).toContain('fleet work');
    expect(env['worker KEEL_HOME']).toBe(f.ws.home);
    expect(Object.keys(env).filter((k) => k.startsWith('worker ') && k !== 'worker KEEL_HOME')).toEqual([]);
    // Its memory still holds the URL (process.env): read here, where a command could where Yama's ptrace_scope is 0.
    const urls = scanMemory(Number(env.run), /KEEL_REDIS_URL=redis:\/\/keel-run-[0-9a-f-]{36}:[0-9a-f]{64}@127\.0\.0\.1:\d+/g);
    expect(new Set(urls).size).toBe(1);
    env.KEEL_REDIS_URL = urls[0]!.slice('KEEL_REDIS_URL='.length);
    const other = (await f.queue.getJob('other'))!;
    expect(other.returnvalue).toMatchObject({ conclusion: 'success' });
    const otherStream = `keel-fleet:keel-fleet:run:${other.returnvalue.sessionId}:session:${other.returnvalue.sessionId}`;
    const otherEntries = await f.conn.xlen(otherStream);
    expect(otherEntries).toBeGreaterThan(0);
    const stolen = new Redis(env.KEEL_REDIS_URL, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    stolen.on('error', () => undefined);
    try {
      const attempts: Array<[string, () => Promise<unknown>]> = [
        ["XADD to the other task's session", () => stolen.xadd(otherStream, '*', 'r', '{"type":"message"}')],
        ["DEL of the other task's session", () => stolen.del(otherStream)],
        ["SET of the other task's session lock", () => stolen.set(`${otherStream}:lock`, 'mine')],
        ["XRANGE of the other task's session", () => stolen.xrange(otherStream, '-', '+')],
        ["HSET of a job in the queue", () => stolen.hset('bull:keel-fleet:spy', 'data', '{}')],
        ["DEL of the broker's request queue", () => stolen.del('bull:keel-fleet-requests:meta')],
        ["SET of the fleet's spent counter", () => stolen.set('keel-fleet:keel-fleet:spent', '0')],
        ['PUBLISH a cancel of every task', () => stolen.publish('keel-fleet:keel-fleet:cancel', '*')],
        ['KEYS', () => stolen.keys('*')],
      ];
      for (const [what, attempt] of attempts) {
        const error = await attempt().then(() => undefined, (err: Error) => err.message);
        expect({ what, error }).toEqual({ what, error: expect.stringMatching(/^NOPERM/) });
      }
      // Its own keys are its own.
      await expect(stolen.set(`${env.KEEL_REDIS_SESSION_PREFIX}scratch`, 'x')).resolves.toBe('OK');
    } finally {
      stolen.disconnect();
      probe();
    }
    await finished(f, 2);
    const lines = await results(f);
    expect(lines.map((l) => [l.id, l.conclusion])).toEqual(expect.arrayContaining([['other', 'success'], ['spy', 'success']]));
    expect(await f.conn.xlen(otherStream)).toBe(otherEntries);
    // The spy's session and its sub-agent's are under its prefix; nothing went to the shared keel:* space.
    const spy = lines.find((l) => l.id === 'spy');
    const spyKeys = await f.conn.keys(`${env.KEEL_REDIS_SESSION_PREFIX}session:*`);
    expect(spyKeys.filter((k) => !k.endsWith(':lock'))).toHaveLength(2);
    expect(spyKeys).toContain(`${env.KEEL_REDIS_SESSION_PREFIX}session:${spy.sessionId}`);
    expect(await f.conn.keys('keel:*')).toEqual([]);
    // Each task's user lived as long as its run.
    expect(await f.conn.call('ACL', 'USERS')).toEqual(['default']);
  }, 180_000);

  it('fleet.taskUsers false: every run connects as fleet.runRedisUrl\'s user (a Redis without ACL commands)', async () => {
    const f = await setUp(twoTurns);
    await f.conn.call('ACL', 'SETUSER', 'run', 'on', '>run-secret', '~keel-fleet:keel-fleet:run:*', 'resetchannels', '-@all', '+@read', '+@write', '+eval', '+info', '-keys', '-scan', '-@dangerous');
    const config = JSON.parse(readFileSync(path.join(f.ws.home, 'agent.config.json'), 'utf8'));
    config.fleet.runRedisUrl = `redis://run:run-secret@127.0.0.1:${f.redis.port}`;
    config.fleet.taskUsers = false;
    writeFileSync(path.join(f.ws.home, 'agent.config.json'), JSON.stringify(config));
    expect((await submit(f, [{ id: 'shared', cwd: '.', prompt: 'task shared: write', permissionMode: 'edits' }])).code).toBe(0);
    startWorker(f);
    await finished(f, 1);
    const [line] = await results(f);
    expect(line).toMatchObject({ id: 'shared', conclusion: 'success' });
    expect(await f.conn.exists(`keel-fleet:keel-fleet:run:${line.sessionId}:session:${line.sessionId}`)).toBe(1);
    expect(await f.conn.call('ACL', 'USERS')).toEqual(['default', 'run']);
  }, 120_000);

  it('a worker whose Redis user may not make users stops at start with one line, before taking a task', async () => {
    const f = await setUp(twoTurns);
    await f.conn.call('ACL', 'SETUSER', 'worker', 'on', '>w', 'allkeys', 'allchannels', '+@all', '-acl');
    const config = JSON.parse(readFileSync(path.join(f.ws.home, 'agent.config.json'), 'utf8'));
    config.fleet.redisUrl = `redis://worker:w@127.0.0.1:${f.redis.port}`;
    writeFileSync(path.join(f.ws.home, 'agent.config.json'), JSON.stringify(config));
    expect((await submit(f, [{ id: 'waits', cwd: '.', prompt: 'task waits: write' }])).code).toBe(0);
    const run = await startWorker(f).done;
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `keel: fleet work: cannot create a Redis user for each task at redis://worker:***@127.0.0.1:${f.redis.port} (ACL SETUSER: NOPERM this user has no permissions to run the 'acl|setuser' command); give the worker's Redis user the acl command, or set fleet.taskUsers to false (every run then shares fleet.runRedisUrl's user)\n`,
    );
    expect(await f.queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    expect(f.server.messageRequests()).toHaveLength(0);
  }, 60_000);

  it('cancel removes a waiting task and aborts a running one', async () => {
    let held: RecordedRequest | undefined;
    const f = await setUp((request) => {
      held = request;
      return { content: [{ type: 'text', text: 'never sent' }], beforeEvent: ({ closed }) => closed };
    });
    expect((await submit(f, [{ id: 'running', cwd: '.', prompt: 'task running: wait' }, { id: 'waiting', cwd: '.', prompt: 'task waiting: wait' }])).code).toBe(0);
    startWorker(f);
    await waitFor('the running request', async () => held);
    const cancelWaiting = await runKeel(['fleet', 'cancel', 'waiting'], { cwd: f.ws.dir, env: f.env });
    expect(cancelWaiting.stdout).toContain('1 waiting removed');
    expect(await f.queue.getJob('waiting')).toBeUndefined();
    const cancelRunning = await runKeel(['fleet', 'cancel', 'running'], { cwd: f.ws.dir, env: f.env });
    expect(cancelRunning.stdout).toContain('1 running aborted');
    expect(await held!.finished).toBe('closed-early');
    await finished(f, 1);
    const lines = await results(f);
    expect(lines).toEqual([expect.objectContaining({ id: 'running', conclusion: 'cancelled' })]);
    expect(f.server.messageRequests()).toHaveLength(1);
    const again = await runKeel(['fleet', 'cancel', 'running'], { cwd: f.ws.dir, env: f.env });
    expect(again.code).toBe(2);
    expect(again.stderr).toBe('keel: fleet cancel: task "running" has already failed\n');
    // retry puts it back; it runs again (and is cancelled again, with --all)
    const retry = await runKeel(['fleet', 'retry', 'running'], { cwd: f.ws.dir, env: f.env });
    expect(retry.stdout).toBe('queued task running again\n');
    await waitFor('the retried request', async () => f.server.messageRequests().length === 2);
    const all = await runKeel(['fleet', 'cancel', '--all'], { cwd: f.ws.dir, env: f.env });
    expect(all.stdout).toContain('1 running aborted');
    await waitFor('the retried task cancelled', async () => (await f.queue.getFailedCount()) === 1 && (await f.queue.getActiveCount()) === 0);
  }, 180_000);

  it('drains on SIGTERM: the running task finishes, no new one is taken, the worker exits 0', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let heldOnce = false;
    const f = await setUp((request) => {
      if (taskOf(request) === 'first' && !heldOnce) {
        heldOnce = true;
        return { content: [{ type: 'text', text: 'done first' }], beforeEvent: () => released };
      }
      return say(`done ${taskOf(request)}`);
    }, { requestsPerMinute: 6_000 });
    expect((await submit(f, [{ id: 'first', cwd: '.', prompt: 'task first: go' }, { id: 'second', cwd: '.', prompt: 'task second: go' }])).code).toBe(0);
    const worker = startWorker(f);
    await waitFor('the first request', async () => heldOnce);
    worker.child.kill('SIGTERM');
    await waitFor('the drain message', async () => worker.stderr().includes('draining: no new task'));
    release();
    const run = await worker.done;
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('draining: no new task');
    expect(await f.queue.getJobCounts('completed', 'waiting', 'active')).toEqual({ completed: 1, waiting: 1, active: 0 });
    expect(f.server.messageRequests().map(taskOf)).toEqual(['first']);
  }, 180_000);

  it('fleet.drainTimeoutMs hands running tasks back once it has passed', async () => {
    let held: RecordedRequest | undefined;
    const f = await setUp(
      (request) => {
        if (!held) {
          held = request;
          return { content: [{ type: 'text', text: 'never sent' }], beforeEvent: ({ closed }) => closed };
        }
        return say('done');
      },
      { drainTimeoutMs: 300 },
    );
    expect((await submit(f, [{ id: 'slowpoke', cwd: '.', prompt: 'task slowpoke: go' }])).code).toBe(0);
    const worker = startWorker(f);
    await waitFor('the request', async () => held);
    worker.child.kill('SIGTERM');
    const run = await worker.done;
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('handing task slowpoke back to the queue');
    expect(await held!.finished).toBe('closed-early');
    expect(await (await f.queue.getJob('slowpoke'))!.getState()).toBe('waiting');
  }, 120_000);

  it('a second SIGTERM hands running tasks back; another worker resumes them', async () => {
    let heldOnce = false;
    const f = await setUp((request) => {
      const name = taskOf(request);
      if (name === 'long' && request.body.messages.length === 1) return callTool('write_file', { path: 'long.txt', content: 'begun\n' });
      if (name === 'long' && !heldOnce) {
        heldOnce = true;
        return { content: [{ type: 'text', text: 'never sent' }], beforeEvent: ({ closed }) => closed };
      }
      return say(`done ${name}`);
    });
    expect((await submit(f, [{ id: 'long', cwd: '.', prompt: 'task long: go', permissionMode: 'edits' }])).code).toBe(0);
    const worker = startWorker(f);
    await waitFor('the second turn', async () => heldOnce);
    worker.child.kill('SIGTERM');
    await waitFor('the drain message', async () => worker.stderr().includes('draining: no new task'));
    worker.child.kill('SIGTERM');
    const run = await worker.done;
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('handing task long back to the queue');
    expect(await (await f.queue.getJob('long'))!.getState()).toBe('waiting');
    startWorker(f);
    await finished(f, 1);
    const [line] = await results(f);
    expect(line).toMatchObject({ id: 'long', conclusion: 'success', result: 'done long' });
    expect(line.patch).toContain('+begun');
    const lengths = f.server.messageRequests().map((r) => r.body.messages.length);
    // Turn 1 once; the handed-back turn is asked again by the resumed run, after the history.
    expect(lengths).toEqual([1, 3, 4]);
    expect(lastText(f.server.messageRequests()[2])).toContain(RESUME_PROMPT_START);
  }, 180_000);

  it('stops taking tasks when the fleet-wide budget is reached', async () => {
    // Each turn costs $0.03 (10,000 input tokens at $3 per million): a two-turn task costs $0.06.
    const priced = (turn: ScriptedTurn): ScriptedTurn => ({ ...turn, model: 'claude-sonnet-test', usage: { input_tokens: 10_000, output_tokens: 0 } });
    const f = await setUp((request) => priced(twoTurns(request)), { budgetUsd: 0.05 });
    expect((await submit(f, ['b1', 'b2', 'b3'].map((id) => ({ id, cwd: '.', prompt: `task ${id}: write`, permissionMode: 'edits' })))).code).toBe(0);
    const worker = startWorker(f);
    await waitFor('the budget stop', async () => worker.stderr().includes('budget of $0.05 reached'));
    await finished(f, 1);
    const status = JSON.parse((await runKeel(['fleet', 'status', '--json'], { cwd: f.ws.dir, env: f.env })).stdout);
    expect(status).toMatchObject({ paused: true, counts: { completed: 1, active: 0 }, budgetUsd: 0.05, budgetStop: expect.stringContaining("the fleet's budget of $0.05 is reached") });
    expect(status.spentUsd).toBeCloseTo(0.06, 5);
    expect(await f.queue.getJobCounts('waiting')).toMatchObject({ waiting: 2 });
    expect(new Set(f.server.messageRequests().map(taskOf)).size).toBe(1);
    const [line] = await results(f);
    expect(line.costUsd).toBeCloseTo(0.06, 5);
  }, 180_000);

  it("a task's own budget ends its run", async () => {
    const f = await setUp((request) => ({ ...twoTurns(request), model: 'claude-sonnet-test', usage: { input_tokens: 10_000, output_tokens: 0 } }));
    expect((await submit(f, [{ id: 'capped', cwd: '.', prompt: 'task capped: write', permissionMode: 'edits', maxBudgetUsd: 0.02 }])).code).toBe(0);
    startWorker(f);
    await finished(f, 1);
    const [line] = await results(f);
    expect(line).toMatchObject({ id: 'capped', isError: true, conclusion: 'error_during_execution', error: expect.stringContaining("the task's budget of $0.02 is spent") });
    expect(f.server.messageRequests()).toHaveLength(1);
  }, 180_000);

  it("a task's env names pass those variables of the worker's environment, and only those, never Keel's credentials; a missing one fails the task", async () => {
    const f = await setUp((request) =>
      request.body.messages.length === 1 ? callTool('bash', { command: 'echo "named=$FLEET_NAMED other=$FLEET_OTHER key=$ANTHROPIC_API_KEY redis=$KEEL_REDIS_URL"' }) : say('done'),
    );
    expect(
      (await submit(f, [
        { id: 'envy', cwd: '.', prompt: 'task envy: env', permissionMode: 'auto', env: ['FLEET_NAMED'] },
        { id: 'lacking', cwd: '.', prompt: 'task lacking: env', env: ['FLEET_ABSENT'] },
      ])).code,
    ).toBe(0);
    f.env = { ...f.env, FLEET_NAMED: 'given', FLEET_OTHER: 'withheld' };
    startWorker(f);
    await finished(f, 2);
    const lines = await results(f);
    expect(lines.find((l) => l.id === 'lacking')).toMatchObject({ conclusion: 'failed', error: 'task lacking: environment variable FLEET_ABSENT is not set on this worker' });
    expect(lines.find((l) => l.id === 'envy')).toMatchObject({ conclusion: 'success' });
    const second = f.server.messageRequests().find((r) => taskOf(r) === 'envy' && r.body.messages.length === 3)!;
    // Keel's own credentials (the API key, the Redis URL) stay out of the run's commands.
    expect(second.body.messages[2].content[0].content).toBe('named=given other= key= redis=');
  }, 120_000);

  it('a task whose prompt looks like a flag gives it to the model as text: it never becomes an option of the run (--config would load code)', async () => {
    const f = await setUp(() => say('read it'));
    const canaries = mkdtempSync(path.join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'keel-fleet-canary-'));
    try {
      const evil = path.join(canaries, 'evil.mjs');
      writeFileSync(evil, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(path.join(canaries, 'PWNED'))}, 'x');\nexport default {};\n`);
      expect((await submit(f, [{ id: 'flaggy', cwd: '.', prompt: `--config=${evil}` }])).code).toBe(0);
      startWorker(f);
      await finished(f, 1);
      expect((await results(f)).find((l) => l.id === 'flaggy')).toMatchObject({ conclusion: 'success', result: 'read it' });
      expect(existsSync(path.join(canaries, 'PWNED'))).toBe(false);
      expect(textOf(f.server.messageRequests()[0]!.body.messages[0].content)).toContain(`--config=${evil}`);
    } finally {
      rmSync(canaries, { recursive: true, force: true });
    }
  }, 120_000);

  it('a job written straight to Redis is checked like a tasks file before anything runs: a bad field fails it, naming the field', async () => {
    const f = await setUp(() => say('should not run'));
    const good = { id: 'ok', cwd: f.ws.dir, prompt: 'task ok: hi', sessionId: '0b7a1c9e-3f2d-4e5a-9b8c-7d6e5f4a3b2c' };
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['escape', { ...good, id: '../../escape' }, 'id:'],
      ['badsession', { ...good, id: 'badsession', sessionId: '--help' }, 'sessionId:'],
      ['badrepo', { id: 'badrepo', repo: '--upload-pack=touch /tmp/x', prompt: 'p', sessionId: good.sessionId }, 'repo:'],
      ['badref', { ...good, id: 'badref', ref: '--orphan=x' }, 'ref:'],
      ['relcwd', { ...good, id: 'relcwd', cwd: 'relative/dir' }, 'cwd:'],
      ['extra', { ...good, id: 'extra', keelArgs: ['--trust'] }, 'keelArgs'],
    ];
    for (const [jobId, task] of bad) await f.queue.add('task', { task, submittedAt: Date.now() }, { jobId, attempts: 3, removeOnComplete: false, removeOnFail: false });
    startWorker(f);
    await waitFor('every bad job failed', async () => ((await f.queue.getJobCounts('failed')).failed >= bad.length ? true : undefined));
    for (const [jobId, , field] of bad) {
      const job = await f.queue.getJob(jobId);
      expect(job?.failedReason).toMatch(/^task payload /);
      expect(job?.failedReason).toContain(field);
      // Refused once, never retried.
      expect(job?.attemptsMade).toBe(1);
    }
    expect(f.server.messageRequests()).toHaveLength(0);
    expect(existsSync(path.join(path.dirname(f.ws.dir), 'escape'))).toBe(false);
  }, 120_000);

  it('a bad tasks file: the line is named and nothing of the file is queued', async () => {
    const f = await setUp(twoTurns);
    const cases: Array<[string, string]> = [
      ['{"cwd":".","prompt":"ok"}\n{"cwd":".","prompt":"ok"}\n{"cwd":"."}\n', 'line 3: prompt: Invalid input: expected string, received undefined'],
      ['{"cwd":".","prompt":"ok"}\nnot json\n', 'line 2: not valid JSON'],
      ['{"id":"a","cwd":".","prompt":"ok"}\n{"id":"a","cwd":".","prompt":"ok"}\n', 'line 2: id "a" is also the id of line 1'],
      ['{"id":"12","cwd":".","prompt":"ok"}\n', 'line 1: id: must not be a plain number'],
      ['{"cwd":".","prompt":"ok","colour":"red"}\n', 'line 1: Unrecognized key: "colour"'],
      ['{"repo":"x","cwd":".","prompt":"ok"}\n', 'line 1: cwd: give exactly one of "repo" (with "ref") or "cwd"'],
    ];
    for (const [text, message] of cases) {
      const file = f.ws.write('bad.jsonl', text);
      const run = await runKeel(['fleet', 'submit', file], { cwd: f.ws.dir, env: f.env });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`keel: fleet submit: ${file}: ${message}`);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain('nothing was queued');
    }
    expect(await f.queue.count()).toBe(0);
    // An id already in the fleet: said, and nothing of the second file queued.
    expect((await submit(f, [{ id: 'x1', cwd: '.', prompt: 'a' }])).code).toBe(0);
    const dup = await submit(f, [{ id: 'x2', cwd: '.', prompt: 'b' }, { id: 'x1', cwd: '.', prompt: 'c' }]);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toBe('keel: fleet submit: task "x1" is already in the fleet (waiting); give it another id, or keel fleet retry x1; nothing was queued\n');
    expect(await f.queue.getJob('x2')).toBeUndefined();
    // From standard input too.
    const piped = await runKeel(['fleet', 'submit', '-'], { cwd: f.ws.dir, env: f.env, input: '{"id":"p1","cwd":".","prompt":"from stdin"}\n' });
    expect(piped.stdout).toBe('queued 1 task: p1\n');
  }, 120_000);

  it('Redis down: every command stops at once with one line naming the URL', async () => {
    const ws = makeWorkspace();
    try {
      const url = `redis://127.0.0.1:${await freePort()}`;
      const env = { KEEL_HOME: ws.home, KEEL_REDIS_URL: url, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
      ws.write('t.jsonl', '{"cwd":".","prompt":"x"}\n');
      for (const args of [['fleet', 'status'], ['fleet', 'work'], ['fleet', 'submit', 't.jsonl'], ['fleet', 'results'], ['fleet', 'cancel', '--all'], ['fleet', 'retry', 'x']]) {
        const run = await runKeel(args, { cwd: ws.dir, env });
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr).toMatch(new RegExp(`^keel: fleet: cannot reach Redis at ${url.replace(/\./g, '\\.')}: .*ECONNREFUSED.*\\n$`));
      }
      // A run on the fleet-worker preset says the same of its session store.
      const run = await runKeel(['-p', 'hi', '--preset', 'fleet-worker'], { cwd: ws.dir, env });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`session-store-redis: cannot reach Redis at ${url}`);
      // No Redis named at all.
      const none = await runKeel(['fleet', 'status'], { cwd: ws.dir, env: { KEEL_HOME: ws.home } });
      expect(none.stderr).toBe('keel: fleet: no Redis URL: set redis.url (or fleet.redisUrl) in the config, or KEEL_REDIS_URL\n');
    } finally {
      ws.cleanup();
    }
  }, 120_000);

  it("the redis plugin's redis.url serves both fleet and session-store-redis; KEEL_REDIS_URL wins over it", async () => {
    const f = await setUp(() => say('kept in redis'));
    writeFileSync(path.join(f.ws.home, 'agent.config.json'), JSON.stringify({ redis: { url: f.redis.url } }));
    const status = await runKeel(['fleet', 'status', '--json'], { cwd: f.ws.dir, env: f.env });
    expect(status.stderr).toBe('');
    expect(JSON.parse(status.stdout)).toMatchObject({ counts: { waiting: 0 } });
    const run = await runKeel(['-p', 'hi', '--preset', 'fleet-worker', '--output-format', 'json'], { cwd: f.ws.dir, env: f.env });
    expect(run.stderr).toBe('');
    const { session_id: id } = JSON.parse(run.stdout);
    expect(await f.conn.xlen(`keel:session:${id}`)).toBeGreaterThan(0);
    // The environment names another Redis (none there): it is the one tried.
    const elsewhere = `redis://127.0.0.1:${await freePort()}`;
    const env = { ...f.env, KEEL_REDIS_URL: elsewhere };
    const fromEnv = await runKeel(['fleet', 'status'], { cwd: f.ws.dir, env, timeoutMs: 30_000 });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain(`keel: fleet: cannot reach Redis at ${elsewhere}`);
    // A bad value is named with its file and key.
    writeFileSync(path.join(f.ws.home, 'agent.config.json'), JSON.stringify({ redis: { url: f.redis.url, reconnectForMs: 'soon' } }));
    const bad = await runKeel(['-p', 'hi'], { cwd: f.ws.dir, env: f.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`keel: ${path.join(f.ws.home, 'agent.config.json')}: redis.reconnectForMs: Invalid input: expected number, received string\n`);
  }, 120_000);

  it('a config with session-store-redis but no redis plugin stops before anything runs, with one line naming the missing plugin', async () => {
    const ws = makeWorkspace();
    try {
      writeFileSync(
        path.join(ws.home, 'agent.config.ts'),
        [
          "import { definePreset } from 'keel';",
          "import sessionStore from 'keel/plugins/session-store';",
          "import sessionStoreRedis from 'keel/plugins/session-store-redis';",
          "export default { preset: definePreset({ name: 'lean', extends: 'minimal', plugins: [sessionStore(), sessionStoreRedis()] }) };",
          '',
        ].join('\n'),
      );
      const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toBe('keel: plugin "session-store-redis" depends on "redis", which is not registered\n');
    } finally {
      ws.cleanup();
    }
  }, 60_000);

  it('status --watch redraws until interrupted', async () => {
    const f = await setUp(twoTurns);
    const child = spawnKeel(['fleet', 'status', '--watch'], { cwd: f.ws.dir, env: f.env });
    let out = '';
    child.stdout!.on('data', (chunk) => (out += chunk));
    const done = collect(child, 60_000);
    await waitFor('two frames', async () => out.split('queue keel-fleet').length > 2);
    child.kill('SIGINT');
    const run = await done;
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(out).toContain('rate limit: none (fleet.requestsPerMinute)');
  }, 120_000);

  it('every sub-command has --help', async () => {
    const ws = makeWorkspace();
    try {
      for (const sub of ['submit', 'work', 'status', 'results', 'cancel', 'retry']) {
        const run = await runKeel(['fleet', sub, '--help'], { cwd: ws.dir, env: { KEEL_HOME: ws.home } });
        expect(run.code).toBe(0);
        expect(run.stdout).toMatch(new RegExp(`^Usage: keel fleet ${sub}`));
      }
      const top = await runKeel(['fleet', '--help'], { cwd: ws.dir, env: { KEEL_HOME: ws.home } });
      expect(top.stdout).toContain('submit <tasks.jsonl | ->');
    } finally {
      ws.cleanup();
    }
  });
});
