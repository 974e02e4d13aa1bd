// Start-up: wall time and peak RSS of `node -e 0`, `keel --version` and a one-turn `keel -p` against a
// scripted server on loopback, measured side by side in one run. Figures are medians of N runs.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'keel.js');
const runs = Number(process.env.BENCH_RUNS ?? 10);
if (!existsSync('/usr/bin/time')) throw new Error('bench/startup.mjs needs /usr/bin/time (Debian package "time")');

const jiti = createJiti(import.meta.url);
const { startAnthropicServer, say } = await jiti.import(path.join(root, 'tests/helpers/anthropic-server.ts'));
const server = await startAnthropicServer(Array.from({ length: runs + 2 }, () => say('ok')));
const home = mkdtempSync(path.join(tmpdir(), 'keel-bench-'));
const env = { PATH: process.env.PATH, KEEL_HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url };

/** One run under /usr/bin/time: [seconds, max RSS in MB]. Async, so the in-process server can answer. */
function measure(argv) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', '%e %M', ...argv], { env, cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${argv.join(' ')} exited ${code}: ${err}`));
      const kb = Number(err.trim().split('\n').pop().split(' ')[1]);
      resolve([Number(process.hrtime.bigint() - started) / 1e9, kb / 1024]);
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function series(label, argv) {
  const times = [];
  const rss = [];
  for (let i = 0; i < runs; i++) {
    const [t, m] = await measure(argv);
    times.push(t);
    rss.push(m);
  }
  return { label, seconds: median(times), rssMb: median(rss) };
}

const rows = [
  await series('node -e 0', [process.execPath, '-e', '0']),
  await series('keel --version', [process.execPath, bin, '--version']),
  await series('keel -p (one turn)', [process.execPath, bin, '-p', 'hi']),
];
await server.close();
rmSync(home, { recursive: true, force: true });

const base = rows[0];
console.log(`start-up, median of ${runs} runs (Node ${process.version})`);
for (const row of rows) {
  console.log(
    `${row.label.padEnd(22)} ${row.seconds.toFixed(3)} s  ${row.rssMb.toFixed(0).padStart(4)} MB   ×${(row.seconds / base.seconds).toFixed(1)} node -e 0`,
  );
}
console.log('reference (DESIGN.md, same class of machine): Claude Code one-turn -p 0.365 s, 201 MB');
