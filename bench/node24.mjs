// The figures on Node 24, the Node users run: bench/startup.mjs, bench/config.mjs, bench/session.mjs (the edit
// session and the loop's CPU per turn), and the interactive UI's (bench/ui.mjs, bench/ui-resume.mjs), each run by Node 24 against a build of this checkout made by Node 24 (the start-up snapshot
// only starts with the Node that built it). Node 24 is BENCH_NODE24=/path/to/node, else .ci/.node24's (the CI's copy
// from the npm registry's `node` package); without one the bench says so and passes. The Node 24 build is a scratch
// copy of the tracked files in the temp folder, with node_modules hard-linked (cp -al), removed at the end unless
// BENCH_NODE24_KEEP=1.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const node24 = process.env.BENCH_NODE24 ?? [path.join(root, '.ci', '.node24', 'node_modules', 'node', 'bin', 'node')].find((file) => existsSync(file));
if (!node24) {
  console.log('Node 24 figures skipped: no Node 24 (set BENCH_NODE24=/path/to/node, or let .ci/run install .ci/.node24)');
  process.exit(0);
}
const version = spawnSync(node24, ['--version'], { encoding: 'utf8' }).stdout.trim();
const bin = path.dirname(node24);
const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };

const copy = mkdtempSync(path.join(tmpdir(), 'keel-bench-node24-'));
try {
  const files = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    if (existsSync(path.join(root, file))) cpSync(path.join(root, file), path.join(copy, file));
  }
  // Hard links: the build resolves packages by real path and refuses any outside the tree it builds.
  const linked = spawnSync('cp', ['-al', path.join(root, 'node_modules'), path.join(copy, 'node_modules')]);
  if (linked.status !== 0) cpSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'), { recursive: true });
  console.log(`Node 24 (${version}, ${node24}): building a Node 24 snapshot of this checkout in ${copy}`);
  const build = spawnSync(node24, [path.join(copy, 'scripts', 'build.mjs')], { cwd: copy, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) throw new Error(`the Node 24 build failed (exit ${build.status})`);
  const runs = [
    ['startup.mjs', {}],
    ['config.mjs', {}],
    ['session.mjs', {}],
    ['ui.mjs', {}],
    ['ui-resume.mjs', {}],
  ];
  let failed = false;
  // BENCH_NODE24_ONLY=ui-resume,startup: only the benches whose file name contains one of the words.
  const only = process.env.BENCH_NODE24_ONLY?.split(',').filter(Boolean);
  for (const [name, extra] of runs.filter(([name]) => !only || only.some((word) => name.includes(word)))) {
    console.log(`\n-- Node 24: bench/${name}`);
    const run = spawnSync(node24, [path.join(copy, 'bench', name)], { cwd: copy, env: { ...env, ...extra }, stdio: 'inherit' });
    failed ||= run.status !== 0;
  }
  if (failed) process.exitCode = 1;
} finally {
  if (process.env.BENCH_NODE24_KEEP === '1') console.log(`kept ${copy}`);
  else rmSync(copy, { recursive: true, force: true });
}
