// Shared pieces of the benchmarks: process measurement under /usr/bin/time, medians, the scripted server,
// and the `--vs '<command>'` peer (BENCH_VS), run alternately with Keel so both see the same machine state.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
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
