// keel fleet throughput: tasks per minute for 1, 2 and 4 workers (each `keel fleet work`, concurrency 1) against the
// scripted model on a real Redis, and the per-task overhead of the fleet over a plain `keel -p` of the same task.
// Each task is two turns (write_file, then an answer). BENCH_TASKS (default 24) tasks per worker count.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { benchPath, bin, callTool, measure, median, say, startAnthropicServer } from './lib.mjs';

const TASKS = Number(process.env.BENCH_TASKS ?? 24);
const WORKERS = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);
const PLAIN_RUNS = Number(process.env.BENCH_RUNS ?? 7);

const base = mkdtempSync(path.join(tmpdir(), 'keel-bench-fleet-'));
const project = path.join(base, 'project');
const home = path.join(base, 'home');
mkdirSync(project, { recursive: true });
mkdirSync(home, { recursive: true });
execFileSync('git', ['init', '--quiet', project]);
writeFileSync(path.join(project, 'README.md'), 'bench\n');
execFileSync('git', ['-C', project, 'add', '-A']);
execFileSync('git', ['-C', project, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '--quiet', '-m', 'start']);

const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const redisDir = path.join(base, 'redis');
mkdirSync(redisDir);
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', redisDir, '--appendonly', 'yes', '--save', ''], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve) => {
  let out = '';
  redis.stdout.on('data', (d) => {
    out += d;
    if (out.includes('Ready to accept connections')) resolve();
  });
});
const url = `redis://127.0.0.1:${port}`;
const textOf = (c) => (typeof c === 'string' ? c : c.map((b) => b.text ?? '').join(''));
const server = await startAnthropicServer([], {
  route: (request) => {
    const name = /task (\S+):/.exec(textOf(request.body.messages[0].content))?.[1] ?? 'x';
    return request.body.messages.length === 1 ? callTool('write_file', { path: `out-${name}.txt`, content: `${name}\n` }) : say(`done ${name}`);
  },
});
const env = { PATH: benchPath, HOME: home, KEEL_HOME: home, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'bench-key', LANG: 'C.UTF-8' };
const conn = new Redis(url, { maxRetriesPerRequest: null });

const keel = (args, input) =>
  new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: project, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.resume();
    child.stdin.end(input ?? '');
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`keel ${args.join(' ')}: ${code} ${err}`))));
  });

try {
  // A plain keel -p of the same task, in the project (what a task costs without the fleet).
  const plain = [];
  for (let i = 0; i < PLAIN_RUNS; i++) {
    plain.push((await measure([bin, '-p', `task plain${i}: write`, '--permission-mode', 'edits'], { env, cwd: project })).wall);
    execFileSync('git', ['-C', project, 'clean', '-fdq']);
  }
  const plainWall = median(plain);

  const rows = [];
  for (const workers of WORKERS) {
    const queueName = `bench-${workers}`;
    writeFileSync(path.join(home, 'agent.config.json'), JSON.stringify({ fleet: { redisUrl: url, queue: queueName, workDir: path.join(base, 'work') } }));
    const queue = new Queue(queueName, { connection: conn });
    const tasks = Array.from({ length: TASKS }, (_, i) => JSON.stringify({ id: `w${workers}-${i}`, cwd: '.', prompt: `task w${workers}-${i}: write`, permissionMode: 'edits' })).join('\n');
    await keel(['fleet', 'submit', '-'], tasks);
    const started = process.hrtime.bigint();
    const children = Array.from({ length: workers }, () => spawn(bin, ['fleet', 'work'], { cwd: project, env, stdio: ['ignore', 'ignore', 'ignore'] }));
    for (;;) {
      const counts = await queue.getJobCounts('completed', 'failed');
      if (counts.completed + counts.failed >= TASKS) {
        if (counts.failed) throw new Error(`${counts.failed} task(s) failed with ${workers} worker(s)`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await Promise.all(children.map((child) => new Promise((resolve) => (child.on('close', resolve), child.kill('SIGTERM')))));
    await queue.close();
    rows.push({ workers, seconds, perMinute: (TASKS * 60) / seconds, perTask: seconds / TASKS });
  }

  console.log(`keel fleet, ${TASKS} two-turn tasks per row, scripted model, one local Redis (Node ${process.version})   ${new Date().toISOString().slice(11, 16)} UTC`);
  for (const row of rows) {
    console.log(`  ${String(row.workers).padStart(2)} worker${row.workers === 1 ? ' ' : 's'}   ${row.perMinute.toFixed(1).padStart(6)} tasks/min   ${row.seconds.toFixed(1).padStart(5)} s   ×${(row.perMinute / rows[0].perMinute).toFixed(2)} one worker`);
  }
  const one = rows.find((r) => r.workers === 1);
  console.log(`  plain keel -p of one such task (median of ${PLAIN_RUNS}): ${plainWall.toFixed(3)} s`);
  if (one) console.log(`  per-task overhead of the fleet (1 worker, concurrency 1): ${((one.perTask - plainWall) * 1000).toFixed(0)} ms (${one.perTask.toFixed(3)} s a task against ${plainWall.toFixed(3)} s)`);
} finally {
  conn.disconnect();
  await server.close();
  redis.kill('SIGTERM');
  await new Promise((resolve) => redis.on('close', resolve));
  rmSync(base, { recursive: true, force: true });
}
