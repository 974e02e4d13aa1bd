// Ad-hoc paired A/B of the loop's CPU per turn between builds (not run by npm run bench unless BENCH_LOOP_AB is set):
// BENCH_LOOP_AB='base=/tmp/keel-base/bin/keel.js;head=%bin' runs BENCH_TURNS (1 000) read_file turns per build in one
// process each, alternating the order every round (BENCH_RUNS rounds, default 5), and reads the CPU of the whole
// process (/proc/<pid>/stat: every thread, living or ended) and of its main thread (/proc/<pid>/task/<pid>/stat) at
// turn 100 and at the last turn, from outside: the executable starts from its snapshot as users run it, no probe.
// Prints per build the medians of ms per turn and the median of the per-round differences against the first build.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchPath, bin, median, say, startAnthropicServer } from './lib.mjs';

const specs = (process.env.BENCH_LOOP_AB ?? '').split(';').filter(Boolean);
if (specs.length === 0) {
  console.log("loop A/B skipped: set BENCH_LOOP_AB='base=/path/to/other/bin/keel.js;head=%bin'");
  process.exit(0);
}
const builds = specs.map((spec) => ({ label: spec.slice(0, spec.indexOf('=')), exe: spec.slice(spec.indexOf('=') + 1).trim().replace('%bin', bin) }));
const turns = Number(process.env.BENCH_TURNS ?? 1000);
const rounds = Number(process.env.BENCH_RUNS ?? 5);
const from = 100;
const base = mkdtempSync(path.join(tmpdir(), 'keel-bench-loop-ab-'));
const home = path.join(base, 'home');
const project = path.join(base, 'project');
mkdirSync(path.join(project, '.git'), { recursive: true });
mkdirSync(home);
writeFileSync(path.join(project, 'small.txt'), 'x\n');
const ticks = 100; // USER_HZ: /proc times are in 1/100 s

/** utime + stime of a /proc stat line, in ms. */
function cpuOf(file) {
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / ticks) * 1000;
}
const sample = (pid) => ({ all: cpuOf(`/proc/${pid}/stat`), main: cpuOf(`/proc/${pid}/task/${pid}/stat`) });

let child;
const marks = {};
const server = await startAnthropicServer([], {
  route: (request) => {
    const turn = (request.body.messages.length + 1) / 2;
    server.requests.splice(0); // each body holds the whole history: keep none
    if (turn === from || turn === turns) marks[turn] = sample(child.pid);
    return turn > turns ? say('done') : { content: [{ type: 'tool_use', id: `r${turn}`, name: 'read_file', input: { path: 'small.txt' } }] };
  },
});
const env = { PATH: benchPath, HOME: home, KEEL_HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url };

async function loop(exe) {
  for (const key of Object.keys(marks)) delete marks[key];
  child = spawn(exe, ['-p', 'loop', '--permission-mode', 'auto', '--max-turns', String(turns + 10)], { cwd: project, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${exe} exited ${code}: ${stderr.slice(-1000)}`);
  const n = turns - from;
  return { all: (marks[turns].all - marks[from].all) / n, main: (marks[turns].main - marks[from].main) / n };
}

const results = builds.map(() => []);
try {
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...builds.keys()].reverse() : [...builds.keys()];
    for (const j of order) results[j].push(await loop(builds[j].exe));
  }
} finally {
  await server.close();
  rmSync(base, { recursive: true, force: true });
}
console.log(`loop CPU per turn, turns ${from}–${turns}, ${rounds} alternated rounds (Node ${process.version}; /proc at 10 ms resolution over ${turns - from} turns)`);
for (const [j, build] of builds.entries()) {
  const paired = (key) => median(results[j].map((x, i) => x[key] - results[0][i][key]));
  const sign = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
  const all = median(results[j].map((x) => x.all));
  const main = median(results[j].map((x) => x.main));
  console.log(`  ${build.label.padEnd(10)} all threads ${all.toFixed(2)} ms  main thread ${main.toFixed(2)} ms  other threads ${(all - main).toFixed(2)} ms` + (j ? `   paired vs ${builds[0].label}: ${sign(paired('all'))} / ${sign(paired('main'))} ms` : ''));
}
