// Ad-hoc A/B of start-up variants (not part of npm run bench): BENCH_AB='a=argv …;b=argv …' runs each as given,
// interleaved round by round against the scripted server, and prints medians and the median of the paired
// per-round differences against the first variant (drift in the machine's speed cancels out). "%bin" is bin/keel.js.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchPath, bin, measure, median, runs, say, startAnthropicServer } from './lib.mjs';

// BENCH_AB_EDIT=1: the edit session of bench/session.mjs (read → edit → bash → answer) instead of one turn.
const edit = Boolean(process.env.BENCH_AB_EDIT);
const base = mkdtempSync(path.join(tmpdir(), 'keel-bench-'));
const home = path.join(base, 'home');
const project = path.join(base, 'project');
mkdirSync(path.join(project, '.git'), { recursive: true });
mkdirSync(home);
const steps = [{ name: 'read_file', input: { path: 'a.txt' } }, { name: 'edit_file', input: { path: 'a.txt', old_string: 'hello', new_string: 'goodbye' } }, { name: 'bash', input: { command: 'cat a.txt' } }];
const editStep = (request) => {
  const step = steps[(request.body.messages.length - 1) / 2];
  return step ? { content: [{ type: 'tool_use', id: `t${request.body.messages.length}`, ...step }] } : say('done');
};
const server = await startAnthropicServer([], { route: edit ? editStep : () => say('ok') });
const env = { PATH: benchPath, HOME: home, KEEL_HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url };
const rows = [];
for (const spec of (process.env.BENCH_AB ?? '').split(';').filter(Boolean)) {
  const at = spec.indexOf('=');
  const argv = spec.slice(at + 1).trim().split(/\s+/).map((a) => (a === '%bin' ? bin : a === 'node' ? process.execPath : a));
  rows.push({ label: spec.slice(0, at), argv: edit ? [...argv.slice(0, -2), '-p', 'edit a.txt', '--permission-mode', 'auto'] : argv });
}
const walls = rows.map(() => []);
for (let i = 0; i < runs; i++) {
  for (const [j, row] of i % 2 ? [...rows.entries()].reverse() : [...rows.entries()]) {
    writeFileSync(path.join(project, 'a.txt'), 'hello world\n');
    walls[j].push((await measure(row.argv, { env, cwd: edit ? project : home })).wall);
  }
}
await server.close();
rmSync(base, { recursive: true, force: true });
for (const [j, row] of rows.entries()) {
  const diff = median(walls[j].map((w, i) => w - walls[0][i])) * 1000;
  console.log(`${row.label.padEnd(16)} median ${(median(walls[j]) * 1000).toFixed(1)} ms   paired vs ${rows[0].label}: ${diff >= 0 ? '+' : ''}${diff.toFixed(1)} ms`);
}
