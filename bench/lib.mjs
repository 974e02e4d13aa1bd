// Shared pieces of the benchmarks: process measurement under /usr/bin/time, medians, the scripted server,
// and the `--vs '<command>'` peer (BENCH_VS), run alternately with Keel so both see the same machine state.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const bin = path.join(root, 'bin', 'keel.js');
/** PATH with this Node first: `keel`, run as an executable, starts the `node` it finds there (from its snapshot). */
export const benchPath = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
export const runs = Number(process.env.BENCH_RUNS ?? 10);
/** Another agent CLI to measure beside Keel (`npm run bench -- --vs 'claude'`), split on spaces. */
export const peer = process.env.BENCH_VS ? process.env.BENCH_VS.split(/\s+/).filter(Boolean) : undefined;

if (!existsSync('/usr/bin/time')) throw new Error('the benchmarks need /usr/bin/time (Debian package "time")');
if (!existsSync(path.join(root, 'dist', 'bin', 'keel.cjs'))) throw new Error('the benchmarks need a build: npm run build');

const jiti = createJiti(import.meta.url);
export const { startAnthropicServer, say, callTool } = await jiti.import(path.join(root, 'tests/helpers/anthropic-server.ts'));

/**
 * One run of `argv` under /usr/bin/time: wall seconds, CPU seconds (user + system) and peak RSS in MiB.
 * Async, so an in-process scripted server can answer the child.
 */
export function measure(argv, { env, cwd }) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', '%U %S %M', ...argv], { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${argv.join(' ')} exited ${code}: ${err.slice(-2000)}`));
      const [user, sys, kb] = err.trim().split('\n').pop().split(' ').map(Number);
      resolve({ wall: Number(process.hrtime.bigint() - started) / 1e9, cpu: user + sys, rss: kb / 1024 });
    });
  });
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Measures several commands `runs` times each, interleaved (a, b, c, a, b, c, …) so drift in machine load hits
 * all of them alike. `rows` are `{ label, argv, before?: async () => void }`; returns medians per row.
 */
export async function interleaved(rows, opts, n = runs) {
  const samples = rows.map(() => []);
  for (let i = 0; i < n; i++) {
    for (const [j, row] of rows.entries()) {
      if (row.before) await row.before();
      samples[j].push(await measure(row.argv, { ...opts, ...row.opts }));
    }
  }
  return rows.map((row, j) => ({
    label: row.label,
    wall: median(samples[j].map((s) => s.wall)),
    cpu: median(samples[j].map((s) => s.cpu)),
    rss: median(samples[j].map((s) => s.rss)),
  }));
}

export function printRows(title, rows, base) {
  console.log(title);
  for (const row of rows) {
    const ratio = base ? `   ×${(row.wall / base.wall).toFixed(2)} ${base.label}` : '';
    console.log(`  ${row.label.padEnd(30)} wall ${row.wall.toFixed(3)} s  cpu ${row.cpu.toFixed(3)} s  rss ${row.rss.toFixed(0).padStart(4)} MiB${ratio}`);
  }
}

/** Prints a target line: `ok` or `MISS` with the figure. */
export function target(label, value, limit, unit = '') {
  console.log(`  target ${label}: ${value.toFixed(2)}${unit} ≤ ${limit}${unit}  ${value <= limit ? 'ok' : 'MISS'}`);
}

/**
 * Paired CPU of start-ups (bench/cpu-ab.py: user + system CPU of each process and its children from wait4's rusage,
 * microseconds, rounds alternating the order), which a loaded machine disturbs far less than wall time. `rows` are
 * `{ label, argv, before? }`, the first the base (`node -e 0`). A row with `before` (a shell command run first, e.g.
 * to reset a file) or with spaces in its words runs through a `/bin/sh` script (its CPU, about 1 ms, counts: give the
 * base one too, `before: 'true'`, to compare like with like). Resolves to `{ [label]: { wall, cpu, rss, pairedCpu } }`
 * (ms, MiB), or undefined where python3 is missing.
 */
export function pairedCpu(rows, { env, cwd }, n = Math.max(runs, 21)) {
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-bench-cpu-'));
  const quote = (a) => `'${a.replaceAll("'", "'\\''")}'`;
  const args = rows.map((row, i) => {
    let command = row.argv.join(' ');
    if (row.before || row.argv.some((a) => /\s/.test(a))) {
      const script = path.join(dir, `row${i}.sh`);
      writeFileSync(script, `${row.before ? `${row.before} || exit 1\n` : ''}exec ${row.argv.map(quote).join(' ')}\n`);
      command = `/bin/sh ${script}`;
    }
    return `row${i}=${command}`;
  });
  const done = () => rmSync(dir, { recursive: true, force: true });
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [path.join(root, 'bench', 'cpu-ab.py'), String(n), ...args], { env: { ...env, CPU_AB_JSON: '1', CWD: cwd }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', () => {
      done();
      resolve(undefined);
    });
    child.on('close', (code) => {
      done();
      if (code !== 0) return reject(new Error(`bench/cpu-ab.py exited ${code}: ${err.slice(-2000)}`));
      const parsed = JSON.parse(out);
      resolve(Object.fromEntries(rows.map((row, i) => [row.label, parsed[`row${i}`]])));
    });
  });
}

/** Prints paired-CPU rows (pairedCpu's result; the first row is the base). */
export function printPairedCpu(title, result) {
  console.log(title);
  for (const [label, r] of Object.entries(result)) {
    console.log(`  ${label.padEnd(30)} cpu ${r.cpu.toFixed(1).padStart(6)} ms  paired +${r.pairedCpu.toFixed(1).padStart(5)} ms  wall ${r.wall.toFixed(1).padStart(6)} ms  rss ${r.rss.toFixed(0).padStart(4)} MiB`);
  }
}
