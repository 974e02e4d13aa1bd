// Search: the `grep` tool over a generated tree (BENCH_FILES files, default 50 000) through ripgrep and through the
// JavaScript fallback, beside `rg` run directly with the same walk; and the `glob` tool over the same tree.
// The tools run in-process (built dist/), as the loop calls them; medians of BENCH_RUNS (5).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { median, root, target } from './lib.mjs';

const files = Number(process.env.BENCH_FILES ?? 50_000);
const runs = Number(process.env.BENCH_RUNS ?? 5);
const rg = spawnSync('which', ['rg'], { encoding: 'utf8' }).stdout.trim();
if (!rg) throw new Error('bench/search.mjs needs ripgrep (Debian package "ripgrep")');

const base = mkdtempSync(path.join(tmpdir(), 'keel-bench-search-'));
const project = path.join(base, 'project');
const line = 'const value = compute(input, options); // some ordinary source line\n';
for (let i = 0; i < files; i++) {
  const dir = path.join(project, `pkg${i % 50}`, `mod${Math.floor(i / 50) % 40}`);
  if (i < 2000) mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `file${i}.ts`), line.repeat(20) + (i % 997 === 0 ? 'export const NEEDLE_7f3 = 1;\n' : ''));
}
mkdirSync(path.join(project, '.git'));

const { createKernel, defaultConfig, startSession } = await import(path.join(root, 'dist', 'kernel', 'index.js'));
const { default: toolsFs } = await import(path.join(root, 'dist', 'plugins', 'tools-fs', 'index.js'));

async function toolRunner(grep) {
  const kernel = createKernel({ config: defaultConfig({ cwd: project, projectRoot: project, keelHome: base }) });
  kernel.use(toolsFs({ grep }));
  kernel.seal();
  const session = await startSession(kernel, { cwd: project, projectRoot: project, permissionMode: 'auto' });
  return async (name, input) => {
    const tool = kernel.tools.get(name);
    const signal = new AbortController().signal;
    const call = { id: 'b', name, input };
    const turn = { session, kernel, index: 1, signal, data: new Map(), emit: () => undefined };
    const result = await tool.execute(tool.input.parse(input), { signal, session, turn, call, kernel, cwd: project, emit: turn.emit });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content).slice(0, 300)}`);
    return result;
  };
}

/**
 * Medians of `runs` rounds in which every case runs once, in turn (the order reversed every other round), so a drift
 * of the machine's speed during the bench hits every case alike; `ratio` is the median of the per-round ratios to
 * the first case.
 */
async function interleavedTimes(cases) {
  const samples = cases.map(() => []);
  for (let i = 0; i < runs; i++) {
    const order = i % 2 ? [...cases.keys()].reverse() : [...cases.keys()];
    for (const j of order) {
      const t = process.hrtime.bigint();
      await cases[j]();
      samples[j].push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  return samples.map((s) => ({ ms: median(s), ratio: median(s.map((x, i) => x / samples[0][i])) }));
}

const viaRg = await toolRunner('rg');
const viaJs = await toolRunner('js');
const query = { pattern: 'NEEDLE_\\w+', output_mode: 'files_with_matches' };
await viaRg('grep', query); // warm the page cache and the module
await viaJs('grep', query);
const [rgAlone, grepRg, grepJs, globTs] = await interleavedTimes([
  async () => spawnSync(rg, ['--files-with-matches', '--hidden', '--glob', '!.git', 'NEEDLE_\\w+', project]),
  () => viaRg('grep', query),
  () => viaJs('grep', query),
  () => viaRg('glob', { pattern: '**/*.ts' }),
]);
console.log(`search over ${files} files, median of ${runs} interleaved rounds (ratios: median of the rounds' ratios)`);
console.log(`  rg alone                   ${rgAlone.ms.toFixed(1)} ms`);
console.log(`  grep tool via ripgrep      ${grepRg.ms.toFixed(1)} ms   ×${grepRg.ratio.toFixed(2)} rg alone`);
console.log(`  grep tool, JS fallback     ${grepJs.ms.toFixed(1)} ms   ×${grepJs.ratio.toFixed(2)} rg alone`);
console.log(`  glob **/*.ts               ${globTs.ms.toFixed(1)} ms`);
target('grep via ripgrep / rg alone', grepRg.ratio, 1.3, '×');
rmSync(base, { recursive: true, force: true });
