// Runs the benchmarks in bench/ one after another (never in parallel: they measure time and memory).
// `npm run bench` runs them all; `npm run bench -- resume startup` runs those whose file name contains a word.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'bench');
// `--vs '<command>'`: another agent CLI (honouring ANTHROPIC_BASE_URL) measured beside Keel in the same runs.
const args = process.argv.slice(2);
const vsAt = args.findIndex((a) => a === '--vs' || a.startsWith('--vs='));
let vs;
if (vsAt >= 0) {
  vs = args[vsAt].startsWith('--vs=') ? args[vsAt].slice(5) : args[vsAt + 1];
  if (!vs) {
    console.error("bench: --vs needs a command, e.g. npm run bench -- --vs 'claude'");
    process.exit(2);
  }
  args.splice(vsAt, args[vsAt].startsWith('--vs=') ? 1 : 2);
}
const filters = args;
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.mjs') && !['lib.mjs', 'probe.mjs', 'session-file.mjs'].includes(name))
  .filter((name) => filters.length === 0 || filters.some((word) => name.includes(word)))
  .sort();
if (files.length === 0) {
  console.error(`bench: no benchmark in bench/ matches ${filters.join(', ')}`);
  process.exit(2);
}
const failed = [];
for (const name of files) {
  console.log(`\n== bench/${name}`);
  const run = spawnSync(process.execPath, [path.join(dir, name)], { cwd: root, stdio: 'inherit', env: vs ? { ...process.env, BENCH_VS: vs } : process.env });
  if (run.status !== 0) failed.push(name);
}
if (failed.length) {
  console.error(`\nbench: failed: ${failed.join(', ')}`);
  process.exit(1);
}
