// Before and after, side by side: `node -e 0`, a one-turn `-p` and the edit session of another build of Keel
// (BENCH_BASE=<checkout with a build>, e.g. the commit before a change) and of this one (also with
// KEEL_NO_SNAPSHOT=1), interleaved in one run, each run as an executable. Without BENCH_BASE it says so and measures nothing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchPath, bin, interleaved, printRows, runs, say, startAnthropicServer } from './lib.mjs';

const baseBin = process.env.BENCH_BASE ? path.join(path.resolve(process.env.BENCH_BASE), 'bin', 'keel.js') : undefined;
if (!baseBin) {
  console.log('compare: set BENCH_BASE=<a built checkout of Keel> to measure it beside this one');
  process.exit(0);
}
const dir = mkdtempSync(path.join(tmpdir(), 'keel-bench-compare-'));
const project = path.join(dir, 'project');
mkdirSync(path.join(project, '.git'), { recursive: true });
const file = path.join(project, 'a.txt');
const steps = [
  { name: 'read_file', input: { path: 'a.txt' } },
  { name: 'edit_file', input: { path: 'a.txt', old_string: 'hello', new_string: 'goodbye' } },
  { name: 'bash', input: { command: 'cat a.txt' } },
];
const server = await startAnthropicServer([], {
  route: (request) => {
    if (request.body.messages[0].content !== 'edit a.txt' && request.body.messages[0].content?.[0]?.text !== 'edit a.txt') return say('ok');
    const step = steps[(request.body.messages.length - 1) / 2];
    return step ? { content: [{ type: 'tool_use', id: `t${request.body.messages.length}`, ...step }] } : say('done');
  },
});
const homes = { base: path.join(dir, 'home-base'), head: path.join(dir, 'home-head') };
for (const home of Object.values(homes)) mkdirSync(home);
const env = (home) => ({ PATH: benchPath, HOME: home, KEEL_HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url });
const reset = async () => writeFileSync(file, 'hello world\n');
const rows = [
  { label: 'node -e 0', argv: [process.execPath, '-e', '0'] },
  { label: 'base -p (one turn)', argv: [baseBin, '-p', 'hi'], opts: { env: env(homes.base) } },
  { label: 'head -p (one turn)', argv: [bin, '-p', 'hi'], opts: { env: env(homes.head) } },
  { label: 'head -p, no snapshot', argv: [bin, '-p', 'hi'], opts: { env: { ...env(homes.head), KEEL_NO_SNAPSHOT: '1' } } },
  { label: 'base edit session', argv: [baseBin, '-p', 'edit a.txt', '--permission-mode', 'auto'], opts: { env: env(homes.base) }, before: reset },
  { label: 'head edit session', argv: [bin, '-p', 'edit a.txt', '--permission-mode', 'auto'], opts: { env: env(homes.head) }, before: reset },
];
const results = await interleaved(rows, { env: env(homes.head), cwd: project });
await server.close();
rmSync(dir, { recursive: true, force: true });
printRows(`base ${process.env.BENCH_BASE} vs this checkout, median of ${runs} interleaved runs (Node ${process.version})`, results, results[0]);
