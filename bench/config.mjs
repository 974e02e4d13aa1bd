// What an agent.config.ts costs a start: one-turn `keel -p hi` in a trusted project without a config, with this
// repository's own agent.config.ts, and with a config that imports a plugin package by name (the example
// keel-plugin-git-guard, installed in the project's node_modules), measured interleaved against a scripted server:
// wall, CPU and peak RSS, medians of BENCH_RUNS (10), ratios to `node -e 0` and the differences to no config.
// The configs run from the transpile cache ($KEEL_HOME/cache/transpiled) after a first run fills it; "cache off"
// (KEEL_NO_TRANSPILE_CACHE=1) shows what a first start, or a changed config, pays to transpile.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchPath, bin, measure, median, printRows, root, runs, say, startAnthropicServer, target } from './lib.mjs';

const server = await startAnthropicServer([], { route: () => say('ok') });
const base = mkdtempSync(path.join(tmpdir(), 'keel-bench-'));
const home = path.join(base, 'home');
mkdirSync(home);
const env = { PATH: benchPath, HOME: home, KEEL_HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url };

function project(name, files) {
  const dir = path.join(base, name);
  mkdirSync(path.join(dir, '.git'), { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  return dir;
}
const bare = project('none', {});
const repo = project('repo', { 'agent.config.ts': (await import('node:fs')).readFileSync(path.join(root, 'agent.config.ts'), 'utf8') });
const withPlugin = project('plugin', {
  'agent.config.ts': "import { defineConfig } from 'keel';\nimport gitGuard from 'keel-plugin-git-guard';\n\nexport default defineConfig({ plugins: [gitGuard({ branches: ['main'] })] });\n",
});
cpSync(path.join(root, 'examples', 'keel-plugin-git-guard'), path.join(withPlugin, 'node_modules', 'keel-plugin-git-guard'), { recursive: true, filter: (src) => !src.includes(`${path.sep}test`) });
// Trust each project, and run each config once so that the cache holds it.
for (const dir of [bare, repo, withPlugin]) {
  await measure([bin, 'trust'], { env, cwd: dir });
  await measure([bin, '-p', 'hi'], { env, cwd: dir });
}
const p = [bin, '-p', 'hi'];
const rows = [
  { label: 'node -e 0', argv: [process.execPath, '-e', '0'], opts: { cwd: bare } },
  { label: 'keel -p, no config', argv: p, opts: { cwd: bare } },
  { label: "keel -p, the repository's config", argv: p, opts: { cwd: repo } },
  { label: 'keel -p, config importing a plugin', argv: p, opts: { cwd: withPlugin } },
  { label: "repository's config, cache off", argv: p, opts: { cwd: repo, env: { ...env, KEEL_NO_TRANSPILE_CACHE: '1' } } },
];
// Rounds alternate their order, and each config row is also reported as the median of its per-round difference
// to the no-config run of the same round, which cancels most of a loaded machine's drift.
const samples = rows.map(() => []);
for (let i = 0; i < runs; i++) {
  for (const j of i % 2 ? [...rows.keys()].reverse() : [...rows.keys()]) samples[j].push(await measure(rows[j].argv, { env, ...rows[j].opts }));
}
await server.close();
rmSync(base, { recursive: true, force: true });

const pick = (j, key) => samples[j].map((s) => s[key]);
const results = rows.map((row, j) => ({ label: row.label, wall: median(pick(j, 'wall')), cpu: median(pick(j, 'cpu')), rss: median(pick(j, 'rss')) }));
const paired = (j, key) => median(samples[j].map((s, i) => s[key] - samples[1][i][key]));
const [floor] = results;
printRows(`agent.config.ts at start-up, median of ${runs} alternated rounds (Node ${process.version})`, results, floor);
console.log('  over no config, median of the per-round differences:');
for (const j of [2, 3, 4]) {
  console.log(`  ${rows[j].label.padEnd(38)} wall ${(paired(j, 'wall') * 1000).toFixed(0).padStart(5)} ms  cpu ${(paired(j, 'cpu') * 1000).toFixed(0).padStart(5)} ms  rss ${paired(j, 'rss').toFixed(1).padStart(5)} MiB`);
}
target("repository's config over no config, wall", paired(2, 'wall') * 1000, 30, ' ms');
target("repository's config over no config, RSS", paired(2, 'rss'), 5, ' MiB');
target('plugin-importing config over no config, wall', paired(3, 'wall') * 1000, 30, ' ms');
target('plugin-importing config over no config, RSS', paired(3, 'rss'), 5, ' MiB');
