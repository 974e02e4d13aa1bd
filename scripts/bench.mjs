// Runs the benchmarks in bench/ one after another (never in parallel: they measure time and memory).
// `npm run bench` runs them all; `npm run bench -- resume startup` runs those whose file name contains a word.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'bench');
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.mjs'))
  .filter((name) => filters.length === 0 || filters.some((word) => name.includes(word)))
  .sort();
if (files.length === 0) {
  console.error(`bench: no benchmark in bench/ matches ${filters.join(', ')}`);
  process.exit(2);
}
const failed = [];
for (const name of files) {
  console.log(`\n== bench/${name}`);
  const run = spawnSync(process.execPath, [path.join(dir, name)], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) failed.push(name);
}
if (failed.length) {
  console.error(`\nbench: failed: ${failed.join(', ')}`);
  process.exit(1);
}
